// `base:` inheritance and file-relative paths; see inheritance.h.
#include "config/inheritance.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "common/fs.h"
#include "config/config_loader.h"

namespace tisa::config {

const std::vector<std::string> kPathKeys = {"data.dataset"};

namespace {

namespace stdfs = std::filesystem;

std::string display_path(const stdfs::path& p) { return p.lexically_normal().string(); }

// Reads one file and its `base:` chain; `chain` holds the canonical paths being loaded (cycles).
TreeNode load_tree(const std::string& path, std::vector<std::string>& chain,
                   std::vector<std::string>& chain_display, const Location* included_from) {
  std::error_code ec;
  if (!stdfs::exists(path, ec)) {
    if (included_from)
      throw Error(included_from->str() + ": base: config file '" + path + "' does not exist");
    throw Error("config file '" + path + "' does not exist");
  }
  if (stdfs::is_directory(path, ec)) throw Error("config file '" + path + "' is a directory, expected a YAML file");
  const std::string canonical = stdfs::weakly_canonical(path, ec).string();
  if (std::find(chain.begin(), chain.end(), canonical) != chain.end()) {
    std::vector<std::string> cycle(chain_display.begin() + (std::find(chain.begin(), chain.end(), canonical) - chain.begin()),
                                   chain_display.end());
    cycle.push_back(display_path(path));
    throw Error((included_from ? included_from->str() + ": base: " : std::string()) +
                "inheritance cycle: " + join(cycle, " -> "));
  }
  chain.push_back(canonical);
  chain_display.push_back(display_path(path));

  const std::string text = fs::read_file(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    Location loc = mark_location(e.mark, Location{path, "", 0, 0});
    throw Error(loc.str() + ": YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw Error(path + ": cannot parse YAML: " + e.what());
  }
  Location file{path, stdfs::path(path).parent_path().string(), 0, 0};
  if (file.dir.empty()) file.dir = ".";
  std::vector<std::string> errors;
  TreeNode tree = from_yaml(root, file, Location{path, file.dir, 1, 1}, errors);
  if (!errors.empty()) throw Error(join(errors, "\n"));
  if (tree.kind == TreeNode::Kind::kNull) {
    tree.kind = TreeNode::Kind::kMap;
  } else if (tree.kind != TreeNode::Kind::kMap) {
    throw Error(tree.loc.str() + ": expected a mapping of sections (model:, data:, ...) at the top level, got " +
                kind_name(tree));
  }

  if (const TreeNode* base = tree.find("base")) {
    if (base->kind != TreeNode::Kind::kScalar || base->scalar.empty())
      throw Error(base->loc.str() + ": base: expected the path of a config file to extend, got " + kind_name(*base));
    stdfs::path base_path(base->scalar);
    if (base_path.is_relative()) base_path = stdfs::path(file.dir) / base_path;
    Location base_loc = base->loc;
    TreeNode merged = load_tree(base_path.lexically_normal().string(), chain, chain_display, &base_loc);
    tree.erase("base");
    merge_into(merged, tree);
    tree = std::move(merged);
  }
  chain.pop_back();
  chain_display.pop_back();
  return tree;
}

}  // namespace

TreeNode load_config_tree(const std::string& path) {
  std::vector<std::string> chain, chain_display;
  return load_tree(path, chain, chain_display, nullptr);
}

void resolve_relative_paths(TreeNode& root) {
  for (const auto& key : kPathKeys) {
    TreeNode* n = find_path(root, key);
    if (!n || n->kind != TreeNode::Kind::kScalar || n->scalar.empty() || n->loc.dir.empty()) continue;
    stdfs::path p(n->scalar);
    if (p.is_absolute()) continue;
    n->scalar = (stdfs::path(n->loc.dir) / p).lexically_normal().string();
  }
}

}  // namespace tisa::config
