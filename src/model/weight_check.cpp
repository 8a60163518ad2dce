// Weight checks; see weight_check.h.
#include "model/weight_check.h"

#include <torch/torch.h>

#include "common/error.h"

namespace tisa::model {

void require_finite(const at::Tensor& t, const std::string& name, const std::string& source) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0) return;
  const at::Tensor finite = torch::isfinite(t);
  if (finite.all().item<bool>()) return;
  const int64_t nan = torch::isnan(t).sum().item<int64_t>();
  const int64_t inf = t.numel() - finite.sum().item<int64_t>() - nan;
  throw Error(source + ": tensor '" + name + "' has " + std::to_string(nan) + " NaN and " + std::to_string(inf) +
              " Inf values (of " + std::to_string(t.numel()) +
              "); the weights are unusable (a diverged or damaged checkpoint)");
}

void require_floating_weight(const at::Tensor& t, const std::string& name, const std::string& source) {
  if (t.is_floating_point()) return;
  throw Error(source + ": tensor '" + name + "' has dtype " + std::string(c10::toString(t.scalar_type())) +
              "; model weights are floating point (F32, F16, BF16 or F64): is this the right file?");
}

}  // namespace tisa::model
