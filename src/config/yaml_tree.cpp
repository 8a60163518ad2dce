// The located YAML tree; see yaml_tree.h.
#include "config/yaml_tree.h"

#include <yaml-cpp/yaml.h>

namespace tisa::config {

const char* kind_name(const TreeNode& n) {
  switch (n.kind) {
    case TreeNode::Kind::kNull: return "an empty value (null)";
    case TreeNode::Kind::kScalar: return "a scalar";
    case TreeNode::Kind::kMap: return "a mapping";
    case TreeNode::Kind::kSequence: return "a list";
  }
  return "?";
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

Location mark_location(const YAML::Mark& mark, const Location& file) {
  Location loc = file;
  if (mark.line >= 0) {
    loc.line = mark.line + 1;
    loc.column = mark.column + 1;
  }
  return loc;
}

// yaml-cpp node → TreeNode, recording locations; duplicate keys and non-scalar keys are errors.
TreeNode from_yaml(const YAML::Node& node, const Location& file, const Location& fallback,
                   std::vector<std::string>& errors) {
  TreeNode out;
  out.loc = mark_location(node.Mark(), file);
  if (out.loc.line == 0) out.loc = fallback;
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out.kind = TreeNode::Kind::kNull;
      break;
    case YAML::NodeType::Scalar:
      out.kind = TreeNode::Kind::kScalar;
      out.scalar = node.Scalar();
      out.quoted = node.Tag() == "!";
      break;
    case YAML::NodeType::Sequence:
      out.kind = TreeNode::Kind::kSequence;
      break;
    case YAML::NodeType::Map:
      out.kind = TreeNode::Kind::kMap;
      for (auto it = node.begin(); it != node.end(); ++it) {
        Location key_loc = mark_location(it->first.Mark(), file);
        if (!it->first.IsScalar()) {
          errors.push_back(key_loc.str() + ": keys must be plain names");
          continue;
        }
        const std::string key = it->first.Scalar();
        if (out.find(key)) {
          errors.push_back(key_loc.str() + ": duplicate key '" + key + "'");
          continue;
        }
        TreeNode child = from_yaml(it->second, file, key_loc, errors);
        child.key_loc = key_loc;
        out.set(key, std::move(child));
      }
      break;
  }
  return out;
}

// Deep merge: maps merge key by key, anything else is replaced by the child (the child wins).
void merge_into(TreeNode& base, const TreeNode& child) {
  if (base.kind == TreeNode::Kind::kMap && child.kind == TreeNode::Kind::kMap) {
    for (size_t i = 0; i < child.keys.size(); ++i) {
      TreeNode* existing = base.find(child.keys[i]);
      if (existing && existing->kind == TreeNode::Kind::kMap &&
          child.values[i].kind == TreeNode::Kind::kMap) {
        merge_into(*existing, child.values[i]);
        existing->key_loc = child.values[i].key_loc;
      } else {
        base.set(child.keys[i], child.values[i]);
      }
    }
    return;
  }
  base = child;
}

std::string shown(const TreeNode& n) {
  if (n.kind != TreeNode::Kind::kScalar) return kind_name(n);
  if (n.quoted) return "the string \"" + n.scalar + "\"";
  return "'" + n.scalar + "'";
}

TreeNode* find_path(TreeNode& root, const std::string& dotted) {
  TreeNode* cur = &root;
  for (const auto& part : split(dotted, '.')) {
    if (cur->kind != TreeNode::Kind::kMap) return nullptr;
    cur = cur->find(part);
    if (!cur) return nullptr;
  }
  return cur;
}

}  // namespace tisa::config
