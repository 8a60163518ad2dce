// The `none` relative scheme: no offset-dependent term (a control; with absolute: false the model
// is a bag of words, SPEC §2). It has no module: the registry returns no scheme modules and the
// attention skips both hooks.
#include "model/position/registry.h"

namespace tisa::model {

std::vector<std::shared_ptr<RelativeSchemeImpl>> make_none_schemes(const config::ModelConfig&, int64_t) {
  return {};
}

}  // namespace tisa::model
