// torch tensors ⇄ safetensors; see tensor_io.h.
#include "model/tensor_io.h"

#include <cstring>

#include "common/error.h"

namespace tisa::model {
namespace {

struct DTypePair {
  io::DType io;
  at::ScalarType torch;
};
constexpr DTypePair kPairs[] = {
    {io::DType::kF64, at::kDouble}, {io::DType::kF32, at::kFloat}, {io::DType::kF16, at::kHalf},
    {io::DType::kBF16, at::kBFloat16}, {io::DType::kI64, at::kLong}, {io::DType::kI32, at::kInt},
    {io::DType::kI16, at::kShort}, {io::DType::kI8, at::kChar}, {io::DType::kU8, at::kByte},
    {io::DType::kBool, at::kBool},
};

}  // namespace

at::Tensor to_torch(const io::RawTensor& raw) {
  if (raw.dtype == io::DType::kU16) {
    // LibTorch 1.13 has no uint16: widen to int32 (values are preserved).
    auto out = torch::empty(raw.shape, torch::kInt);
    auto* dst = out.data_ptr<int32_t>();
    for (int64_t i = 0; i < raw.numel(); ++i) {
      uint16_t v;
      std::memcpy(&v, raw.data.data() + 2 * i, 2);
      dst[i] = v;
    }
    return out;
  }
  for (const auto& p : kPairs)
    if (p.io == raw.dtype) {
      auto out = torch::empty(raw.shape, torch::TensorOptions().dtype(p.torch));
      if (!raw.data.empty()) std::memcpy(out.data_ptr(), raw.data.data(), raw.data.size());
      return out;
    }
  throw Error(std::string("unsupported safetensors dtype ") + io::dtype_name(raw.dtype));
}

io::RawTensor from_torch(const at::Tensor& tensor) {
  auto t = tensor.detach().to(torch::kCPU).contiguous();
  io::RawTensor raw;
  bool found = false;
  for (const auto& p : kPairs)
    if (p.torch == t.scalar_type()) {
      raw.dtype = p.io;
      found = true;
    }
  if (!found) throw Error(std::string("cannot save tensor of dtype ") + std::string(c10::toString(t.scalar_type())));
  raw.shape.assign(t.sizes().begin(), t.sizes().end());
  raw.data.assign(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
  return raw;
}

TensorFile load_tensor_file(const std::string& path) {
  auto st = io::read_safetensors(path);
  TensorFile out;
  out.metadata = std::move(st.metadata);
  for (auto& [name, raw] : st.tensors) out.tensors.emplace(name, to_torch(raw));
  return out;
}

void save_tensor_file(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata) {
  io::SafeTensors st;
  st.metadata = metadata;
  for (const auto& [name, t] : tensors) st.tensors.emplace(name, from_torch(t));
  io::write_safetensors(path, st);
}

}  // namespace tisa::model
