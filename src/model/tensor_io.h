// torch tensors ⇄ safetensors files (SPEC §4): the bridge between io/safetensors.h (torch-free) and
// LibTorch. Loaded tensors live on the CPU and own their memory; saving moves tensors to the CPU and
// makes them contiguous first.
#pragma once
#include <ATen/core/Tensor.h>

#include <map>
#include <string>

#include "io/safetensors.h"

namespace tisa::model {

using TensorMap = std::map<std::string, at::Tensor>;

struct TensorFile {
  TensorMap tensors;
  std::map<std::string, std::string> metadata;
};

at::Tensor to_torch(const io::RawTensor& raw);
io::RawTensor from_torch(const at::Tensor& tensor);

// Reads a .safetensors file into CPU tensors; errors name the file.
TensorFile load_tensor_file(const std::string& path);
// Writes tensors (any device, any supported dtype) atomically, names sorted.
void save_tensor_file(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace tisa::model
