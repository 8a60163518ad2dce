// Reading config files with `base:` inheritance (internal to src/config/): a top-level
// `base: <path>` names a config to extend, relative to the file that names it; maps are merged
// deeply and the child wins; chains are allowed, cycles are errors printing the chain. Also
// resolves path-valued keys (kPathKeys) against the folder of the file that set them.
#pragma once
#include <string>

#include "config/yaml_tree.h"

namespace tisa::config {

// `path` and its base chain as one located tree (a mapping). Throws tisa::Error.
TreeNode load_config_tree(const std::string& path);
// Relative paths in kPathKeys resolved against the folder of the file that set them.
void resolve_relative_paths(TreeNode& root);

}  // namespace tisa::config
