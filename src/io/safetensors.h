// safetensors reader and writer (SPEC §4), torch-free.
//
// Layout: u64 little-endian header length N, N bytes of UTF-8 JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}, then the
// raw little-endian tensor bytes; offsets count from byte 8 + N. The reader applies the validation
// rules of the reference Rust crate (golden/safetensors/README): header length ≤ 100,000,000 and
// inside the file, valid UTF-8 JSON object, known case-sensitive dtypes, non-negative shapes whose
// byte size does not overflow, offsets that tile [0, end) exactly when sorted, 8 + N + end equal
// to the file size, and string-valued metadata. Every rejection throws tisa::Error naming the file.
// The writer sorts names, pads the header with spaces to a multiple of 8 and writes atomically.
// Conversions to and from torch tensors live in src/model/tensor_io.h.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tisa::io {

enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kU16, kBool };

// "F32", "BF16", ...: the exact names of the format.
const char* dtype_name(DType dtype);
// Bytes per element.
size_t dtype_size(DType dtype);
// Parses a case-sensitive dtype name; false when unknown.
bool parse_dtype(std::string_view name, DType* out);

// One tensor: dtype, shape and its raw little-endian bytes (data.size() == numel * dtype_size).
struct RawTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;  // [] = scalar (one element)
  std::string data;
  int64_t numel() const;
};

struct SafeTensors {
  std::map<std::string, RawTensor> tensors;          // sorted by name
  std::map<std::string, std::string> metadata;       // the "__metadata__" object
};

// Parses a whole file's bytes; `source` names the file in error messages.
SafeTensors parse_safetensors(std::string_view bytes, const std::string& source);
// Reads and parses `path`.
SafeTensors read_safetensors(const std::string& path);
// The bytes of a file holding `st` (sorted names, data in name order, header padded to 8).
std::string serialize_safetensors(const SafeTensors& st);
// serialize_safetensors + atomic write.
void write_safetensors(const std::string& path, const SafeTensors& st);

}  // namespace tisa::io
