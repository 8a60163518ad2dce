// Host → device copies of batches; see device_copy.h.
#include "train/device_copy.h"

#include <torch/torch.h>

namespace tisa::train {

at::Tensor host_to_device(const at::Tensor& host, const c10::Device& device) {
  if (device.is_cpu()) return host;
  return host.pin_memory().to(device, /*non_blocking=*/true);
}

}  // namespace tisa::train
