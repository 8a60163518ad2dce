// Position variants by name: one grammar for the paper reproduction's variants, `pretrain
// --position`, bench labels and the report. A variant is the learned absolute table and/or one
// installed scheme (position_settings.h), each with its own defaults:
//   "absolute"                             the learned table alone (ALBERT as published)
//   "<scheme>"                             the scheme alone ("none": no position information)
//   "absolute_<scheme>", "absolute+<scheme>"  both ("absolute_none" = "absolute")
// The names come from the installed scheme table, so a new scheme is a new variant.
#pragma once
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace tisa::config {

struct ModelConfig;

struct PositionVariant {
  bool absolute = false;
  std::string relative = "none";
};

// Null when `name` follows none of the forms above or names no installed scheme.
std::optional<PositionVariant> parse_position_variant(const std::string& name);
// Sets model.position.absolute and .relative from `name`; an unknown name throws tisa::Error
// that starts with `where` (e.g. "--position") and lists the forms and the installed schemes.
void apply_position_variant(const std::string& name, ModelConfig& model, const std::string& where);
// The canonical name of a config's variant: "absolute", "tisa", "absolute_tisa".
std::string position_variant_name(const ModelConfig& model);
// Every variant name, in position_variant_order: "absolute", then per installed scheme (table
// order) "absolute_<scheme>" (but for none) and "<scheme>".
std::vector<std::string> position_variant_names();
// Sort key of a variant name for listings: "absolute" first, then by the scheme's place in the
// table, "absolute_<scheme>" before "<scheme>"; names that are no variant last (by name).
std::pair<int, std::string> position_variant_order(const std::string& name);

}  // namespace tisa::config
