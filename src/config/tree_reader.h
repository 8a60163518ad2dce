// Located tree → typed structs (internal to src/config/): Reader is a visitor of config.h's
// visit() lists that takes each field from the tree, with type checks, and reports every problem
// as "<file>:<line>:<column>: <key.path>: <what was wrong> (<what was expected>)"; keys no field
// claimed are errors listing the known keys and suggesting the closest.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/config_loader.h"
#include "config/yaml_tree.h"

namespace tisa::config {

// Scalar parsing; each returns "" on success or the problem ("expected ..., got ...").
std::string parse_value(const TreeNode& n, int64_t& out);
std::string parse_value(const TreeNode& n, double& out);
std::string parse_value(const TreeNode& n, bool& out);
std::string parse_value(const TreeNode& n, std::string& out);

class Reader {
 public:
  Reader(const TreeNode* node, std::string prefix, std::vector<std::string>& errors)
      : node_(node), prefix_(std::move(prefix)), errors_(errors) {}

  template <class T> void field(const char* key, T& member, const char*) {
    known_.emplace_back(key);
    const TreeNode* v = lookup(key);
    if (!v) return;
    std::string problem = parse_value(*v, member);
    if (!problem.empty()) errors_.push_back(v->loc.str() + ": " + prefix_ + key + ": " + problem);
  }

  template <class E, size_t N> void choice(const char* key, E& member, const NameTable<E, N>& names, const char*) {
    known_.emplace_back(key);
    const TreeNode* v = lookup(key);
    if (!v) return;
    std::vector<std::string> choices;
    for (const auto& [name, value] : names) {
      choices.emplace_back(name);
      if (v->kind == TreeNode::Kind::kScalar && v->scalar == name) {
        member = value;
        return;
      }
    }
    unknown_value(*v, key, choices);
  }

  // A string that must be one of `names` (known at run time, e.g. the installed position schemes).
  void choice(const char* key, std::string& member, const std::vector<std::string>& names, const char*) {
    known_.emplace_back(key);
    const TreeNode* v = lookup(key);
    if (!v) return;
    if (v->kind == TreeNode::Kind::kScalar && std::find(names.begin(), names.end(), v->scalar) != names.end()) {
      member = v->scalar;
      return;
    }
    unknown_value(*v, key, names);
  }

  template <class S> void section(const char* key, S& member, const char*) {
    known_.emplace_back(key);
    const TreeNode* v = lookup(key);
    if (!v || v->kind == TreeNode::Kind::kNull) return;  // empty section: defaults
    if (v->kind != TreeNode::Kind::kMap) {
      errors_.push_back(v->loc.str() + ": " + prefix_ + key + ": expected a section (a mapping of keys), got " +
                        shown(*v));
      return;
    }
    Reader sub(v, prefix_ + key + ".", errors_);
    member.visit(sub);
    sub.check_unknown();
  }

  // Every key of the node that no field claimed is an error listing the known ones.
  void check_unknown(const std::vector<std::string>& also_allowed = {}) {
    if (!node_) return;
    for (size_t i = 0; i < node_->keys.size(); ++i) {
      const std::string& key = node_->keys[i];
      if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
      if (std::find(also_allowed.begin(), also_allowed.end(), key) != also_allowed.end()) continue;
      const TreeNode& v = node_->values[i];
      const Location& loc = v.key_loc.source.empty() ? v.loc : v.key_loc;
      std::string section = prefix_.empty() ? "the top level" : prefix_.substr(0, prefix_.size() - 1);
      std::string msg = loc.str() + ": " + prefix_ + key + ": unknown key";
      std::string near = closest_name(key, known_);
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      msg += "; known keys of " + section + ": " + join(known_, ", ");
      errors_.push_back(msg);
    }
  }

 private:
  void unknown_value(const TreeNode& v, const char* key, const std::vector<std::string>& choices) {
    std::string msg = v.loc.str() + ": " + prefix_ + key + ": unknown value " + shown(v) + " (expected one of: " +
                      join(choices, ", ") + ")";
    if (v.kind == TreeNode::Kind::kScalar) {
      std::string near = closest_name(v.scalar, choices);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
    }
    errors_.push_back(msg);
  }
  const TreeNode* lookup(const char* key) const { return node_ ? node_->find(key) : nullptr; }
  const TreeNode* node_;
  std::string prefix_;
  std::vector<std::string>& errors_;
  std::vector<std::string> known_;
};

// The whole tree as a Config, validated (validate.cpp); problems are located where the tree has
// the key, else attributed to `source`. Throws tisa::Error listing every problem.
Config convert(TreeNode& root, const std::string& source);

}  // namespace tisa::config
