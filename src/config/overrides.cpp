// `--set` overrides; see overrides.h.
#include "config/overrides.h"

#include <yaml-cpp/yaml.h>

#include "common/error.h"
#include "config/config.h"
#include "config/config_loader.h"

namespace tisa::config {
namespace {

// Lists the keys of one struct (no recursion), for override checks and messages.
struct KeyLister {
  std::vector<std::string> keys;
  template <class T> void field(const char* key, T&, const char*) { keys.emplace_back(key); }
  template <class E, size_t N> void choice(const char* key, E&, const NameTable<E, N>&, const char*) {
    keys.emplace_back(key);
  }
  void choice(const char* key, std::string&, const std::vector<std::string>&, const char*) { keys.emplace_back(key); }
  template <class S> void section(const char* key, S&, const char*) { keys.emplace_back(key); }
};

std::string override_usage(const std::string& text) {
  return "bad --set '" + text + "': expected KEY=VALUE with a dotted key path, e.g. --set model.hidden_size=256";
}

// Walks the visit() lists along a dotted key path (checks --set keys).
struct Walker {
  const std::vector<std::string>& parts;
  size_t depth;
  std::string error;
  bool found = false;
  template <class T> void field(const char* key, T&, const char*) { leaf(key); }
  template <class E, size_t N> void choice(const char* key, E&, const NameTable<E, N>&, const char*) { leaf(key); }
  void choice(const char* key, std::string&, const std::vector<std::string>&, const char*) { leaf(key); }
  template <class S> void section(const char* key, S& member, const char*) {
    if (parts[depth] != key) return;
    found = true;
    if (depth + 1 == parts.size()) return;  // a whole section: value must be a mapping
    Walker sub{parts, depth + 1, "", false};
    member.visit(sub);
    if (!sub.found) {
      KeyLister lister;
      member.visit(lister);
      error = unknown_key_message(parts, depth + 1, lister.keys);
    } else {
      error = sub.error;
    }
  }
  void leaf(const char* key) {
    if (parts[depth] != key) return;
    found = true;
    if (depth + 1 != parts.size())
      error = join(std::vector<std::string>(parts.begin(), parts.begin() + static_cast<long>(depth) + 1), ".") +
              " is a value, not a section";
  }
  static std::string unknown_key_message(const std::vector<std::string>& parts, size_t depth,
                                         const std::vector<std::string>& known) {
    std::string path = join(std::vector<std::string>(parts.begin(), parts.begin() + static_cast<long>(depth) + 1), ".");
    std::string section = depth == 0 ? "the top level"
                                     : join(std::vector<std::string>(parts.begin(), parts.begin() + static_cast<long>(depth)), ".");
    std::string msg = path + ": unknown key";
    std::string near = closest_name(parts[depth], known);
    if (!near.empty()) msg += " (did you mean '" + near + "'?)";
    return msg + "; known keys of " + section + ": " + join(known, ", ");
  }
};

}  // namespace

void apply_override(TreeNode& root, const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw Error(override_usage(text));
  std::string key = text.substr(0, eq);
  // Tolerate spaces around the key ("model.x = 3" passed as one argument).
  while (!key.empty() && key.back() == ' ') key.pop_back();
  while (!key.empty() && key.front() == ' ') key.erase(key.begin());
  const std::string value = text.substr(eq + 1);
  std::vector<std::string> parts = split(key, '.');
  for (const auto& p : parts)
    if (p.empty() || p.find_first_of(" \t:") != std::string::npos) throw Error(override_usage(text));

  // Check the key path against the schema so that a typo is reported as such.
  Config defaults;
  std::string unknown_error;
  {
    Walker walker{parts, 0, "", false};
    defaults.visit(walker);
    if (!walker.found) {
      KeyLister lister;
      defaults.visit(lister);
      unknown_error = Walker::unknown_key_message(parts, 0, lister.keys);
    } else {
      unknown_error = walker.error;
    }
  }
  if (!unknown_error.empty()) throw Error("--set " + text + ": " + unknown_error);

  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw Error("--set " + text + ": value is not valid YAML: " + e.msg);
  }
  Location loc{"--set " + text, "", 0, 0};
  std::vector<std::string> errors;
  TreeNode node = from_yaml(parsed, loc, loc, errors);
  if (!errors.empty()) throw Error(join(errors, "\n"));
  node.loc = loc;
  node.key_loc = loc;

  TreeNode* cur = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    TreeNode* next = cur->find(parts[i]);
    if (!next || next->kind != TreeNode::Kind::kMap) {
      TreeNode section;
      section.kind = TreeNode::Kind::kMap;
      section.loc = loc;
      section.key_loc = loc;
      next = &cur->set(parts[i], std::move(section));
    }
    cur = next;
  }
  TreeNode* target = cur->find(parts.back());
  if (target && target->kind == TreeNode::Kind::kMap && node.kind == TreeNode::Kind::kMap) {
    merge_into(*target, node);
  } else {
    cur->set(parts.back(), std::move(node));
  }
}

}  // namespace tisa::config
