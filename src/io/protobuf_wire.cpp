// Protobuf wire format; see protobuf_wire.h.
#include "io/protobuf_wire.h"

#include <cstring>

namespace tisa::io {
namespace {

// Little-endian bytes of an integer (fixed32/fixed64 payloads).
template <class T> void put_le(std::string& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

}  // namespace

void ProtoWriter::raw_varint(uint64_t value) {
  while (value >= 0x80u) {
    out_.push_back(static_cast<char>((value & 0x7Fu) | 0x80u));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void ProtoWriter::tag(int field, int wire_type) {
  raw_varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

ProtoWriter& ProtoWriter::varint(int field, uint64_t value) {
  tag(field, 0);
  raw_varint(value);
  return *this;
}

ProtoWriter& ProtoWriter::float64(int field, double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  tag(field, 1);
  put_le(out_, bits);
  return *this;
}

ProtoWriter& ProtoWriter::float32(int field, float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  tag(field, 5);
  put_le(out_, bits);
  return *this;
}

ProtoWriter& ProtoWriter::bytes(int field, std::string_view value) {
  tag(field, 2);
  raw_varint(value.size());
  out_.append(value.data(), value.size());
  return *this;
}

std::optional<uint64_t> ProtoReader::read_varint() {
  uint64_t value = 0;
  for (int shift = 0; shift < 64 && pos_ < in_.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in_[pos_++]);
    value |= static_cast<uint64_t>(byte & 0x7Fu) << shift;
    if ((byte & 0x80u) == 0) return value;
  }
  return std::nullopt;
}

bool ProtoReader::next(ProtoField& f) {
  if (!ok_ || pos_ >= in_.size()) return false;
  const auto key = read_varint();
  if (!key) return ok_ = false;
  f.field = static_cast<int>(*key >> 3);
  f.wire_type = static_cast<int>(*key & 7u);
  f.number = 0;
  f.data = {};
  auto take = [&](size_t n) {
    if (in_.size() - pos_ < n) return false;
    f.data = in_.substr(pos_, n);
    pos_ += n;
    return true;
  };
  switch (f.wire_type) {
    case 0: {
      const auto v = read_varint();
      if (!v) return ok_ = false;
      f.number = *v;
      return true;
    }
    case 1:
    case 5: {
      const size_t n = f.wire_type == 1 ? 8 : 4;
      if (!take(n)) return ok_ = false;
      for (size_t i = 0; i < n; ++i) f.number |= static_cast<uint64_t>(static_cast<unsigned char>(f.data[i])) << (8 * i);
      return true;
    }
    case 2: {
      const auto n = read_varint();
      if (!n || !take(static_cast<size_t>(*n))) return ok_ = false;
      return true;
    }
    default:
      return ok_ = false;  // groups (3, 4) are not used by these messages
  }
}

}  // namespace tisa::io
