// TFRecord framing; see tf_record.h.
#include "io/tf_record.h"

#include <cstdint>

#include "common/crc32c.h"

namespace tisa::io {
namespace {

template <class T> void put_le(std::string& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

template <class T> T get_le(std::string_view bytes) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return value;
}

}  // namespace

std::string frame_record(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_le<uint64_t>(out, data.size());
  put_le<uint32_t>(out, masked_crc32c(out));
  out.append(data.data(), data.size());
  put_le<uint32_t>(out, masked_crc32c(data));
  return out;
}

RecordScan scan_records(std::string_view bytes) {
  RecordScan scan;
  size_t pos = 0;
  while (bytes.size() - pos >= 12) {
    const std::string_view header = bytes.substr(pos, 8);
    if (get_le<uint32_t>(bytes.substr(pos + 8, 4)) != masked_crc32c(header)) break;
    const uint64_t length = get_le<uint64_t>(header);
    if (bytes.size() - pos < 16 || length > bytes.size() - pos - 16) break;
    const std::string_view data = bytes.substr(pos + 12, static_cast<size_t>(length));
    if (get_le<uint32_t>(bytes.substr(pos + 12 + length, 4)) != masked_crc32c(data)) break;
    scan.records.push_back(data);
    pos += 16 + static_cast<size_t>(length);
  }
  scan.valid_bytes = pos;
  scan.clean = pos == bytes.size();
  return scan;
}

}  // namespace tisa::io
