// Host batch tensors to the training device. On CUDA the bytes go through page-locked (pinned)
// host memory and the copy is asynchronous (non_blocking), so the next batch's transfer overlaps
// the GPU's work instead of stalling the host; LibTorch's caching host allocator keeps the pinned
// buffer alive until the copy has finished. On the CPU the tensor is returned as it is.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace tisa::train {

at::Tensor host_to_device(const at::Tensor& host, const c10::Device& device);

}  // namespace tisa::train
