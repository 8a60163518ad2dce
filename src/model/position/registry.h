// Registry of position schemes (STYLE §3): a literal table in registry.cpp maps a scheme name to
// the factory of one module of that scheme and to its settings struct (model.position.<name>).
// Adding a scheme means its file pair, its test and one table line: the config learns the name
// and the settings from this table (install_position_schemes()), and every other part of the
// program asks the scheme (describe_position, counts, FLOPs, offset profiles).
//
// How many modules a model gets follows position.sharing (config.h), the same for every scheme:
// one per layer application (num_hidden_layers × inner_group_num), one per attention module
// (num_hidden_groups × inner_group_num, reused wherever ALBERT reuses that module's weights), or
// one for the model. A scheme without parameters always gets one module; `none` gets none. The
// encoder registers them as `<name>.<index>`, e.g. `albert.encoder.tisa.0.offsets`.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "model/position/relative_scheme.h"

namespace tisa::model {

using SchemeModule = std::shared_ptr<RelativeSchemeImpl>;
using SchemeModules = std::vector<SchemeModule>;
// Builds one module of a scheme from the model config (its own section, sizes, init range).
// Null for `none`.
using SchemeFactory = SchemeModule (*)(const config::ModelConfig& config);

// Gives the config library the table's names and settings (config/position_settings.h). Call it
// once at start-up, before any config is built or read (tisa-nn's main, the test mains).
void install_position_schemes();

// The sharing in effect: position.sharing, or what the legacy shaw/tisa per_layer and
// per_attention_module switches select when they are set.
config::PositionSharing effective_sharing(const config::ModelConfig& config);
// True when modules are per attention module (group × inner layer), shared like its weights.
bool scheme_follows_layer_sharing(const config::ModelConfig& config);

// Known names, in table order.
std::vector<std::string> relative_scheme_names();
// Builds the modules of scheme `name` for `layers` layer applications; an unknown name throws
// tisa::Error listing the known ones.
SchemeModules make_relative_schemes(const std::string& name, const config::ModelConfig& config, int64_t layers);
// The modules of the configured scheme of `config`.
SchemeModules make_configured_schemes(const config::ModelConfig& config);

// "absolute (P=512) + tisa (S=5, per layer)": every position term of a config, asked of the
// schemes; "none" when there is none.
std::string describe_position(const config::ModelConfig& config);
// Positional parameters as counted in the paper's table: absolute table + scheme parameters.
int64_t scheme_parameter_count(const config::ModelConfig& config);
// Extra forward FLOPs of the configured scheme over all layer applications, for one batch.
double scheme_flops(const config::ModelConfig& config, int64_t batch, int64_t length);

}  // namespace tisa::model
