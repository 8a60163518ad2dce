// Registry of relative position schemes (STYLE §3): a literal table in registry.cpp maps a scheme
// name to a factory; adding a scheme means one file, one table line and a test.
// A factory returns the modules of that scheme for a model: one per attention layer application
// (num_hidden_layers × inner_group_num) when the scheme is per layer, one per attention module
// (num_hidden_groups × inner_group_num) when it follows ALBERT's layer sharing, one when shared,
// none for `none`. The encoder registers them as `<name>.<index>`, e.g. `albert.encoder.tisa.0.offsets`.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

using SchemeModules = std::vector<std::shared_ptr<RelativeSchemeImpl>>;
// `layers`: number of attention layer applications.
using SchemeFactory = SchemeModules (*)(const config::ModelConfig& config, int64_t layers);

SchemeModules make_none_schemes(const config::ModelConfig& config, int64_t layers);   // none.cpp
SchemeModules make_shaw_schemes(const config::ModelConfig& config, int64_t layers);   // registry.cpp
SchemeModules make_tisa_schemes(const config::ModelConfig& config, int64_t layers);   // registry.cpp

// True when the configured scheme keeps one module per attention module (group × inner layer),
// shared like that module's weights (shaw.per_attention_module, HF relative_key's layout).
bool scheme_follows_layer_sharing(const config::ModelConfig& config);

// Name of a configured scheme ("none", "shaw", "tisa").
std::string relative_scheme_name(config::RelativeScheme scheme);
// Known names, in table order.
std::vector<std::string> relative_scheme_names();
// Builds the modules of scheme `name`; an unknown name throws tisa::Error listing the known ones.
SchemeModules make_relative_schemes(const std::string& name, const config::ModelConfig& config, int64_t layers);

}  // namespace tisa::model
