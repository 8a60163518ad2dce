// `--set key.path=value` overrides (internal to src/config/): applied to the located tree after
// the files and before conversion, so they pass the same type checks and validate() as values
// from files. The key path is checked against the visit() lists first, so that a typo is reported
// as such ("unknown key (did you mean ...)"), not as a missing value.
#pragma once
#include <string>

#include "config/yaml_tree.h"

namespace tisa::config {

// Applies "key.path=value" (YAML value syntax) to `root`. Throws tisa::Error naming the override.
void apply_override(TreeNode& root, const std::string& text);

}  // namespace tisa::config
