// Test support for tests/optim: a minimal reader of the F32 safetensors files in
// shared/golden/optim (8-byte LE header length, JSON header, raw LE data; golden README). Only what
// these goldens use; the project's full reader is src/io/safetensors.h.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tisa::test {

// All tensors of a safetensors file whose dtype is F32, as contiguous CPU float tensors.
inline std::map<std::string, at::Tensor> read_f32_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  if (bytes.size() < 8) throw std::runtime_error(path + ": too short");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n > bytes.size() - 8) throw std::runtime_error(path + ": header past end of file");
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  const char* data = bytes.data() + 8 + n;
  const uint64_t data_size = bytes.size() - 8 - n;
  std::map<std::string, at::Tensor> out;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__" || info.at("dtype") != "F32") continue;
    std::vector<int64_t> shape = info.at("shape").get<std::vector<int64_t>>();
    const auto offsets = info.at("data_offsets").get<std::vector<uint64_t>>();
    at::Tensor t = at::empty(shape, at::kFloat);
    const uint64_t size = static_cast<uint64_t>(t.numel()) * 4;
    if (offsets.size() != 2 || offsets[1] - offsets[0] != size || offsets[1] > data_size)
      throw std::runtime_error(path + ": bad data_offsets for " + name);
    std::memcpy(t.data_ptr<float>(), data + offsets[0], size);  // little-endian host assumed
    out.emplace(name, t);
  }
  return out;
}

}  // namespace tisa::test
