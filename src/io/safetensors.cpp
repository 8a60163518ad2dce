// safetensors reader and writer; see safetensors.h for the format and the validation rules.
#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::io {
namespace {

constexpr uint64_t kMaxHeaderSize = 100'000'000;  // the reference crate's limit

struct DTypeInfo {
  const char* name;
  DType dtype;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {"F64", DType::kF64, 8}, {"F32", DType::kF32, 4}, {"F16", DType::kF16, 2},  {"BF16", DType::kBF16, 2},
    {"I64", DType::kI64, 8}, {"I32", DType::kI32, 4}, {"I16", DType::kI16, 2},  {"I8", DType::kI8, 1},
    {"U8", DType::kU8, 1},   {"U16", DType::kU16, 2}, {"BOOL", DType::kBool, 1},
};

[[noreturn]] void reject(const std::string& source, const std::string& why) {
  throw Error("invalid safetensors file " + source + ": " + why);
}

// Strict UTF-8 check (no overlong forms, no surrogates, nothing above U+10FFFF).
bool valid_utf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) { ++i; continue; }
    int extra;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) { extra = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { extra = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { extra = 3; cp = c & 0x07; }
    else return false;
    if (i + extra >= n) return false;
    for (int k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000)) return false;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

uint64_t read_u64_le(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void append_u64_le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// A JSON value as a non-negative integer, or a rejection naming `what`.
uint64_t as_unsigned(const nlohmann::json& j, const std::string& source, const std::string& what) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer() && j.get<int64_t>() >= 0) return static_cast<uint64_t>(j.get<int64_t>());
  reject(source, what + " must be a non-negative integer, got " + j.dump());
}

}  // namespace

const char* dtype_name(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d.name;
  return "?";
}

size_t dtype_size(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d.size;
  return 0;
}

bool parse_dtype(std::string_view name, DType* out) {
  for (const auto& d : kDTypes)
    if (name == d.name) {
      *out = d.dtype;
      return true;
    }
  return false;
}

int64_t RawTensor::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

SafeTensors parse_safetensors(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 8) reject(source, "file of " + std::to_string(bytes.size()) + " bytes is shorter than the 8-byte header length");
  const uint64_t n = read_u64_le(bytes.data());
  if (n > kMaxHeaderSize)
    reject(source, "header length " + std::to_string(n) + " exceeds the limit of " + std::to_string(kMaxHeaderSize));
  if (n > bytes.size() - 8)
    reject(source, "header length " + std::to_string(n) + " runs past the end of the file (" +
                       std::to_string(bytes.size()) + " bytes)");
  if (n < 2) reject(source, "header length " + std::to_string(n) + " is too small for a JSON object");
  const std::string_view header = bytes.substr(8, n);
  if (!valid_utf8(header)) reject(source, "header is not valid UTF-8");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header.begin(), header.end());
  } catch (const nlohmann::json::exception& e) {
    reject(source, std::string("header is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) reject(source, "header must be a JSON object, got " + std::string(j.type_name()));

  SafeTensors st;
  struct Span {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& name = it.key();
    const auto& v = it.value();
    if (name == "__metadata__") {
      if (v.is_null()) continue;
      if (!v.is_object()) reject(source, "__metadata__ must be an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          reject(source, "__metadata__ value of '" + m.key() + "' must be a string, got " + m.value().dump());
        st.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor '" + name + "'";
    if (!v.is_object()) reject(source, what + ": entry must be an object");
    if (!v.contains("dtype") || !v["dtype"].is_string()) reject(source, what + ": missing string 'dtype'");
    if (!v.contains("shape") || !v["shape"].is_array()) reject(source, what + ": missing array 'shape'");
    if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
      reject(source, what + ": missing 'data_offsets' [begin, end]");
    RawTensor t;
    const auto dname = v["dtype"].get<std::string>();
    if (!parse_dtype(dname, &t.dtype))
      reject(source, what + ": unknown dtype '" + dname + "' (expected F64 F32 F16 BF16 I64 I32 I16 I8 U8 U16 BOOL)");
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : v["shape"]) {
      const uint64_t dim = as_unsigned(d, source, what + " shape entry");
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) overflow = true;
      if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / dim) overflow = true;
      else numel *= dim;
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    const uint64_t esize = dtype_size(t.dtype);
    if (overflow || numel > std::numeric_limits<uint64_t>::max() / esize)
      reject(source, what + ": shape " + v["shape"].dump() + " overflows the byte size");
    const uint64_t begin = as_unsigned(v["data_offsets"][0], source, what + " data_offsets");
    const uint64_t end = as_unsigned(v["data_offsets"][1], source, what + " data_offsets");
    if (end < begin)
      reject(source, what + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] end before begin");
    if (end - begin != numel * esize)
      reject(source, what + ": byte span " + std::to_string(end - begin) + " != " + std::to_string(numel) +
                         " elements × " + std::to_string(esize) + " bytes");
    spans.push_back({begin, end, name});
    st.tensors.emplace(name, std::move(t));
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  for (const auto& s : spans) {
    if (s.begin != expected)
      reject(source, "tensor '" + s.name + "' starts at " + std::to_string(s.begin) + " but the previous tensor ends at " +
                         std::to_string(expected) + (s.begin < expected ? " (overlap)" : " (gap)"));
    expected = s.end;
  }
  const uint64_t data_size = bytes.size() - 8 - n;
  if (expected != data_size)
    reject(source, "tensor data ends at " + std::to_string(expected) + " but the file holds " +
                       std::to_string(data_size) + " data bytes (" +
                       (expected > data_size ? "truncated" : "trailing bytes") + ")");
  const char* data = bytes.data() + 8 + n;
  for (const auto& s : spans) st.tensors[s.name].data.assign(data + s.begin, s.end - s.begin);
  return st;
}

SafeTensors read_safetensors(const std::string& path) {
  const std::string bytes = fs::read_file(path);
  return parse_safetensors(bytes, path);
}

std::string serialize_safetensors(const SafeTensors& st) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!st.metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : st.metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : st.tensors) {
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * dtype_size(t.dtype);
    TISA_CHECK(t.data.size() == bytes, "safetensors writer: tensor '" + name + "' holds " +
                                           std::to_string(t.data.size()) + " bytes, expected " + std::to_string(bytes));
    nlohmann::ordered_json e;
    e["dtype"] = dtype_name(t.dtype);
    e["shape"] = t.shape;
    e["data_offsets"] = {offset, offset + bytes};
    header[name] = e;
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + offset);
  append_u64_le(out, text.size());
  out += text;
  for (const auto& [name, t] : st.tensors) out += t.data;
  return out;
}

void write_safetensors(const std::string& path, const SafeTensors& st) {
  fs::write_file_atomic(path, serialize_safetensors(st));
}

}  // namespace tisa::io
