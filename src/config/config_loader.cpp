// Loading a config: files with their base chain (inheritance.h), then `--set` overrides
// (overrides.h), then conversion and validation (tree_reader.h); see config_loader.h.
#include "config/config_loader.h"

#include "config/inheritance.h"
#include "config/overrides.h"
#include "config/tree_reader.h"

namespace tisa::config {

Config default_config() {
  Config config;
  validate_or_throw(config, "defaults");
  return config;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  TreeNode root = load_config_tree(path);
  resolve_relative_paths(root);
  for (const auto& o : overrides) apply_override(root, o);
  return convert(root, path);
}

bool config_file_sets(const std::string& path, const std::string& dotted_key) {
  TreeNode root = load_config_tree(path);
  return find_path(root, dotted_key) != nullptr;
}

Config config_from_overrides(const std::vector<std::string>& overrides) {
  TreeNode root;
  root.kind = TreeNode::Kind::kMap;
  root.loc = Location{"defaults", "", 0, 0};
  for (const auto& o : overrides) apply_override(root, o);
  return convert(root, "defaults and --set");
}

}  // namespace tisa::config
