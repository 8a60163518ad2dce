// The located YAML tree of the config loader (internal to src/config/): files are first read into
// this small tree of our own, which remembers for every value the file, line and column it came
// from, so that after merging a base chain (inheritance.h) and applying overrides (overrides.h)
// every error still points at the place where the offending value was written. Conversion into
// the typed structs is tree_reader.h's job.
#pragma once
#include <string>
#include <vector>

namespace YAML {
class Node;
struct Mark;
}

namespace tisa::config {

struct Location {
  std::string source;  // file path, or "--set k=v", or a JSON source name
  std::string dir;     // folder of the file (for relative paths); empty when not a file
  int line = 0;        // 1-based; 0 = no line (overrides, JSON)
  int column = 0;
  std::string str() const {
    if (line <= 0) return source;
    return source + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
};

struct TreeNode {
  enum class Kind { kNull, kScalar, kMap, kSequence };
  Kind kind = Kind::kNull;
  std::string scalar;
  bool quoted = false;            // scalar was written as a quoted string
  std::vector<std::string> keys;  // kMap: keys in file order
  std::vector<TreeNode> values;   // kMap: values, parallel to keys
  Location loc;                   // where the value is
  Location key_loc;               // where its key is (in the parent map)

  TreeNode* find(const std::string& key) {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &values[i];
    return nullptr;
  }
  const TreeNode* find(const std::string& key) const { return const_cast<TreeNode*>(this)->find(key); }
  void erase(const std::string& key) {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) {
        keys.erase(keys.begin() + static_cast<long>(i));
        values.erase(values.begin() + static_cast<long>(i));
        return;
      }
  }
  TreeNode& set(const std::string& key, TreeNode value) {
    if (TreeNode* existing = find(key)) {
      *existing = std::move(value);
      return *existing;
    }
    keys.push_back(key);
    values.push_back(std::move(value));
    return values.back();
  }
};

// "a scalar", "a mapping", ... (for "expected X, got Y" messages).
const char* kind_name(const TreeNode& n);
// A value as messages show it: 'abc', the string "abc", or its kind.
std::string shown(const TreeNode& n);

std::vector<std::string> split(const std::string& s, char sep);
std::string join(const std::vector<std::string>& items, const std::string& sep);

// The location of a yaml-cpp mark in `file` (line/column 1-based; none when the mark has none).
Location mark_location(const YAML::Mark& mark, const Location& file);
// yaml-cpp node → TreeNode, recording locations (`file` gives source and folder, `fallback` the
// location of values yaml-cpp has none for); duplicate and non-scalar keys go to `errors`.
TreeNode from_yaml(const YAML::Node& node, const Location& file, const Location& fallback,
                   std::vector<std::string>& errors);
// Deep merge: maps merge key by key, anything else is replaced by the child (the child wins).
void merge_into(TreeNode& base, const TreeNode& child);
// The node at a dotted key path ("model.position.relative"), or null.
TreeNode* find_path(TreeNode& root, const std::string& dotted);

}  // namespace tisa::config
