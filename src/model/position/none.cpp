// The `none` scheme: no position term (a control; with absolute: false the model is a bag of
// words, SPEC §2). It has no module: the registry returns none and the attention skips the hooks.
#include "model/position/registry.h"

namespace tisa::model {

std::unique_ptr<config::SchemeSettings> make_none_settings() { return nullptr; }  // no settings

std::shared_ptr<RelativeSchemeImpl> make_none_scheme(const config::ModelConfig&) { return nullptr; }

}  // namespace tisa::model
