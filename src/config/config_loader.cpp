// YAML → typed Config: parsing with locations, `base:` inheritance, `--set` overrides, generic
// conversion through the visit() lists of config.h, validation, dumping and documentation.
//
// Files are first read into a small tree of our own (TreeNode) that remembers, for every value,
// the file, line and column it came from, so that after merging a base chain and applying
// overrides every error still points at the place where the offending value was written.
#include "config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <type_traits>

#include "common/error.h"
#include "common/fs.h"
#include "data/glue_tsv.h"

namespace tisa::config {

const std::vector<std::string> kPathKeys = {"data.dataset"};

namespace {

namespace stdfs = std::filesystem;

// ---------------------------------------------------------------------------- located tree
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

// ---------------------------------------------------------------------------- schema (key lists)
// Lists the keys of one struct (no recursion), for override checks and messages.
struct KeyLister {
  std::vector<std::string> keys;
  template <class T> void field(const char* key, T&, const char*) { keys.emplace_back(key); }
  template <class E, size_t N> void choice(const char* key, E&, const NameTable<E, N>&, const char*) {
    keys.emplace_back(key);
  }
  template <class S> void section(const char* key, S&, const char*) { keys.emplace_back(key); }
};

// ---------------------------------------------------------------------------- scalar parsing
const std::regex& int_pattern() {
  static const std::regex re("[-+]?[0-9]+");
  return re;
}
const std::regex& float_pattern() {
  static const std::regex re("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  return re;
}

std::string shown(const TreeNode& n) {
  if (n.kind != TreeNode::Kind::kScalar) return kind_name(n);
  if (n.quoted) return "the string \"" + n.scalar + "\"";
  return "'" + n.scalar + "'";
}

// Each parse returns "" on success or the problem ("expected ..., got ...").
std::string parse_value(const TreeNode& n, int64_t& out) {
  if (n.kind != TreeNode::Kind::kScalar || n.quoted) return "expected an integer, got " + shown(n);
  if (!std::regex_match(n.scalar, int_pattern())) {
    if (std::regex_match(n.scalar, float_pattern()))
      return "expected an integer, got the floating-point number " + n.scalar;
    return "expected an integer, got " + shown(n);
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(n.scalar.c_str(), &end, 10);
  if (errno == ERANGE) return "expected an integer, got " + n.scalar + " which is out of the 64-bit range";
  out = static_cast<int64_t>(v);
  return "";
}

std::string parse_value(const TreeNode& n, double& out) {
  if (n.kind != TreeNode::Kind::kScalar || n.quoted) return "expected a number, got " + shown(n);
  const std::string& s = n.scalar;
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF") {
    out = HUGE_VAL;
    return "";
  }
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") {
    out = -HUGE_VAL;
    return "";
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    out = std::nan("");
    return "";
  }
  if (!std::regex_match(s, float_pattern())) return "expected a number, got " + shown(n);
  errno = 0;
  double v = std::strtod(s.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(v)) return "expected a number, got " + s + " which overflows a double";
  out = v;
  return "";
}

std::string parse_value(const TreeNode& n, bool& out) {
  if (n.kind == TreeNode::Kind::kScalar && !n.quoted) {
    const std::string& s = n.scalar;
    if (s == "true" || s == "True" || s == "TRUE") {
      out = true;
      return "";
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      out = false;
      return "";
    }
  }
  return "expected true or false, got " + shown(n);
}

std::string parse_value(const TreeNode& n, std::string& out) {
  if (n.kind == TreeNode::Kind::kNull) {
    out.clear();
    return "";
  }
  if (n.kind != TreeNode::Kind::kScalar) return std::string("expected a string, got ") + kind_name(n);
  out = n.scalar;
  return "";
}

// ---------------------------------------------------------------------------- tree → struct
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
    std::string msg = v->loc.str() + ": " + prefix_ + key + ": unknown value " + shown(*v) + " (expected one of: " +
                      join(choices, ", ") + ")";
    if (v->kind == TreeNode::Kind::kScalar) {
      std::string near = closest_name(v->scalar, choices);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
    }
    errors_.push_back(msg);
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
  const TreeNode* lookup(const char* key) const { return node_ ? node_->find(key) : nullptr; }
  const TreeNode* node_;
  std::string prefix_;
  std::vector<std::string>& errors_;
  std::vector<std::string> known_;
};

// ---------------------------------------------------------------------------- overrides
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

// ---------------------------------------------------------------------------- paths and conversion
TreeNode* find_path(TreeNode& root, const std::string& dotted) {
  TreeNode* cur = &root;
  for (const auto& part : split(dotted, '.')) {
    if (cur->kind != TreeNode::Kind::kMap) return nullptr;
    cur = cur->find(part);
    if (!cur) return nullptr;
  }
  return cur;
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

Config convert(TreeNode& root, const std::string& source) {
  Config config;
  std::vector<std::string> errors;
  Reader reader(&root, "", errors);
  config.visit(reader);
  reader.check_unknown();
  if (!errors.empty()) throw Error(join(errors, "\n"));
  // validate() with locations where the tree has the key.
  std::vector<ConfigProblem> problems = validate(config);
  if (!problems.empty()) {
    std::vector<std::string> lines;
    for (const auto& p : problems) {
      TreeNode* n = find_path(root, p.key);
      std::string where = n ? n->loc.str() : source;
      lines.push_back(where + ": " + p.key + ": " + p.message);
    }
    throw Error(join(lines, "\n"));
  }
  return config;
}

// ---------------------------------------------------------------------------- value formatting
std::string format_double(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string format_value(int64_t v) { return std::to_string(v); }
std::string format_value(double v) { return format_double(v); }
std::string format_value(bool v) { return v ? "true" : "false"; }
std::string format_value(const std::string& v) { return nlohmann::json(v).dump(); }  // JSON = YAML double-quoted

template <class T> const char* type_name() {
  if constexpr (std::is_same_v<T, int64_t>) return "int";
  else if constexpr (std::is_same_v<T, double>) return "float";
  else if constexpr (std::is_same_v<T, bool>) return "bool";
  else return "string";
}

template <class E, size_t N> std::string choice_name(E value, const NameTable<E, N>& names) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}

// Emits YAML with help comments.
class YamlWriter {
 public:
  explicit YamlWriter(std::ostringstream& out, int indent = 0) : out_(out), indent_(indent) {}
  template <class T> void field(const char* key, T& member, const char* help) {
    line(key, format_value(member), help);
  }
  template <class E, size_t N> void choice(const char* key, E& member, const NameTable<E, N>& names, const char* help) {
    line(key, choice_name(member, names), help);
  }
  template <class S> void section(const char* key, S& member, const char* help) {
    out_ << std::string(indent_, ' ') << key << ":  # " << help << "\n";
    YamlWriter sub(out_, indent_ + 2);
    member.visit(sub);
  }

 private:
  void line(const char* key, const std::string& value, const char* help) {
    out_ << std::string(indent_, ' ') << key << ": " << value << "  # " << help << "\n";
  }
  std::ostringstream& out_;
  int indent_;
};

class Describer {
 public:
  Describer(std::vector<std::array<std::string, 3>>& rows, std::string prefix) : rows_(rows), prefix_(std::move(prefix)) {}
  template <class T> void field(const char* key, T& member, const char* help) {
    rows_.push_back({prefix_ + key, std::string(type_name<T>()) + " = " + format_value(member), help});
  }
  template <class E, size_t N> void choice(const char* key, E& member, const NameTable<E, N>& names, const char* help) {
    std::vector<std::string> choices;
    for (const auto& entry : names) choices.emplace_back(entry.first);
    rows_.push_back({prefix_ + key, "{" + join(choices, "|") + "} = " + choice_name(member, names), help});
  }
  template <class S> void section(const char* key, S& member, const char*) {
    Describer sub(rows_, prefix_ + key + ".");
    member.visit(sub);
  }

 private:
  std::vector<std::array<std::string, 3>>& rows_;
  std::string prefix_;
};

class JsonWriter {
 public:
  explicit JsonWriter(nlohmann::json& out) : out_(out) { out_ = nlohmann::json::object(); }
  template <class T> void field(const char* key, T& member, const char*) {
    if constexpr (std::is_same_v<T, double>) {
      if (!std::isfinite(member)) {
        out_[key] = format_double(member);  // JSON has no inf/nan; the reader accepts these forms
        return;
      }
    }
    out_[key] = member;
  }
  template <class E, size_t N> void choice(const char* key, E& member, const NameTable<E, N>& names, const char*) {
    out_[key] = choice_name(member, names);
  }
  template <class S> void section(const char* key, S& member, const char*) {
    nlohmann::json sub;
    JsonWriter writer(sub);
    member.visit(writer);
    out_[key] = std::move(sub);
  }

 private:
  nlohmann::json& out_;
};

TreeNode from_json(const nlohmann::json& j, const Location& loc) {
  TreeNode n;
  n.loc = loc;
  n.key_loc = loc;
  if (j.is_null()) {
    n.kind = TreeNode::Kind::kNull;
  } else if (j.is_object()) {
    n.kind = TreeNode::Kind::kMap;
    for (auto it = j.begin(); it != j.end(); ++it) n.set(it.key(), from_json(it.value(), loc));
  } else if (j.is_array()) {
    n.kind = TreeNode::Kind::kSequence;
  } else if (j.is_string()) {
    n.kind = TreeNode::Kind::kScalar;
    n.scalar = j.get<std::string>();
    // Non-finite doubles are stored as ".inf"/".nan" strings; let them through as plain scalars.
    n.quoted = !(n.scalar == ".inf" || n.scalar == "-.inf" || n.scalar == ".nan");
  } else if (j.is_boolean()) {
    n.kind = TreeNode::Kind::kScalar;
    n.scalar = j.get<bool>() ? "true" : "false";
  } else if (j.is_number_float()) {
    n.kind = TreeNode::Kind::kScalar;
    n.scalar = format_double(j.get<double>());
  } else {
    n.kind = TreeNode::Kind::kScalar;
    n.scalar = j.dump();
  }
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------- public API
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

Config default_config() {
  Config config;
  validate_or_throw(config, "defaults");
  return config;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::vector<std::string> chain, chain_display;
  TreeNode root = load_tree(path, chain, chain_display, nullptr);
  resolve_relative_paths(root);
  for (const auto& o : overrides) apply_override(root, o);
  return convert(root, path);
}

Config config_from_overrides(const std::vector<std::string>& overrides) {
  TreeNode root;
  root.kind = TreeNode::Kind::kMap;
  root.loc = Location{"defaults", "", 0, 0};
  for (const auto& o : overrides) apply_override(root, o);
  return convert(root, "defaults and --set");
}

std::string dump_yaml(const Config& config) {
  std::ostringstream out;
  out << "# tisa-train resolved configuration (every field; defaults < YAML < --set)\n";
  Config copy = config;
  YamlWriter writer(out);
  copy.visit(writer);
  return out.str();
}

void write_resolved_config(const Config& config, const std::string& path) {
  fs::write_file_atomic(path, dump_yaml(config));
}

std::string describe_defaults() {
  std::vector<std::array<std::string, 3>> rows;
  Config defaults;
  Describer describer(rows, "");
  defaults.visit(describer);
  size_t w0 = 0, w1 = 0;
  for (const auto& r : rows) {
    w0 = std::max(w0, r[0].size());
    w1 = std::max(w1, r[1].size());
  }
  std::ostringstream out;
  for (const auto& r : rows)
    out << r[0] << std::string(w0 - r[0].size() + 2, ' ') << r[1] << std::string(w1 - r[1].size() + 2, ' ') << r[2]
        << "\n";
  return out.str();
}

nlohmann::json model_config_to_json(const ModelConfig& model) {
  nlohmann::json out;
  ModelConfig copy = model;
  JsonWriter writer(out);
  copy.visit(writer);
  return out;
}

nlohmann::json config_to_json(const Config& config) {
  nlohmann::json out;
  Config copy = config;
  JsonWriter writer(out);
  copy.visit(writer);
  return out;
}

ModelConfig model_config_from_json(const nlohmann::json& json, const std::string& source) {
  if (!json.is_object()) throw Error(source + ": expected a JSON object with the model configuration");
  TreeNode root = from_json(json, Location{source, "", 0, 0});
  ModelConfig model;
  std::vector<std::string> errors;
  Reader reader(&root, "model.", errors);
  model.visit(reader);
  reader.check_unknown();
  if (!errors.empty()) throw Error(join(errors, "\n"));
  Config config;
  config.model = model;
  std::vector<std::string> lines;
  for (const auto& p : validate(config))
    if (p.key.rfind("model.", 0) == 0) lines.push_back(source + ": " + p.key + ": " + p.message);
  if (!lines.empty()) throw Error(join(lines, "\n"));
  return model;
}

// ---------------------------------------------------------------------------- validate
// More threads than any machine this trainer targets has cores: a typo (data.workers=100000 used to
// abort the process creating them). Counts above the cores of this machine are warned about at
// start-up (train/runtime_info.h), not refused, so that a config travels between machines.
constexpr int64_t kMaxThreads = 1024;

std::vector<ConfigProblem> validate(const Config& c) {
  std::vector<ConfigProblem> problems;
  auto add = [&](const std::string& key, const std::string& message) { problems.push_back({key, message}); };
  auto at_least = [&](const std::string& key, int64_t value, int64_t minimum) {
    if (value < minimum) add(key, "must be >= " + std::to_string(minimum) + ", got " + std::to_string(value));
  };
  auto at_most = [&](const std::string& key, int64_t value, int64_t maximum, const std::string& why) {
    if (value > maximum) add(key, "must be <= " + std::to_string(maximum) + " (" + why + "), got " + std::to_string(value));
  };
  auto positive = [&](const std::string& key, double value) {
    if (!(value > 0) || std::isinf(value)) add(key, "must be a positive finite number, got " + format_double(value));
  };
  auto non_negative = [&](const std::string& key, double value) {
    if (!(value >= 0) || std::isinf(value)) add(key, "must be a finite number >= 0, got " + format_double(value));
  };
  auto probability = [&](const std::string& key, double value) {  // [0, 1)
    if (!(value >= 0 && value < 1)) add(key, "must be in [0, 1), got " + format_double(value));
  };

  // model (SPEC §2, §3)
  const ModelConfig& m = c.model;
  at_least("model.vocab_size", m.vocab_size, 1);
  at_least("model.embedding_size", m.embedding_size, 1);
  at_least("model.hidden_size", m.hidden_size, 1);
  at_least("model.num_hidden_layers", m.num_hidden_layers, 1);
  at_least("model.num_hidden_groups", m.num_hidden_groups, 1);
  at_least("model.inner_group_num", m.inner_group_num, 1);
  at_least("model.num_attention_heads", m.num_attention_heads, 1);
  at_least("model.intermediate_size", m.intermediate_size, 1);
  at_least("model.max_position_embeddings", m.max_position_embeddings, 1);
  at_least("model.type_vocab_size", m.type_vocab_size, 1);
  if (m.hidden_size >= 1 && m.num_attention_heads >= 1 && m.hidden_size % m.num_attention_heads != 0)
    add("model.hidden_size", "must be divisible by model.num_attention_heads (" + std::to_string(m.num_attention_heads) +
                                 "), got " + std::to_string(m.hidden_size));
  if (m.num_hidden_layers >= 1 && m.num_hidden_groups >= 1) {
    if (m.num_hidden_groups > m.num_hidden_layers)
      add("model.num_hidden_groups", "must be <= model.num_hidden_layers (" + std::to_string(m.num_hidden_layers) +
                                         "), got " + std::to_string(m.num_hidden_groups));
    else if (m.num_hidden_layers % m.num_hidden_groups != 0)
      add("model.num_hidden_layers", "must be divisible by model.num_hidden_groups (" +
                                         std::to_string(m.num_hidden_groups) + "), got " +
                                         std::to_string(m.num_hidden_layers));
  }
  if (m.hidden_act != "gelu_new" && m.hidden_act != "gelu" && m.hidden_act != "relu")
    add("model.hidden_act", "unknown activation '" + m.hidden_act + "' (expected one of: gelu_new, gelu, relu)");
  probability("model.hidden_dropout_prob", m.hidden_dropout_prob);
  probability("model.attention_probs_dropout_prob", m.attention_probs_dropout_prob);
  probability("model.classifier_dropout_prob", m.classifier_dropout_prob);
  positive("model.layer_norm_eps", m.layer_norm_eps);
  positive("model.initializer_range", m.initializer_range);
  if (m.pad_token_id < 0 || (m.vocab_size >= 1 && m.pad_token_id >= m.vocab_size))
    add("model.pad_token_id", "must be in [0, model.vocab_size), got " + std::to_string(m.pad_token_id));
  at_least("model.position.shaw.max_distance", m.position.shaw.max_distance, 1);
  if (m.position.shaw.per_attention_module && m.position.shaw.per_layer)
    add("model.position.shaw.per_attention_module", "needs model.position.shaw.per_layer: false");
  at_least("model.position.tisa.kernels", m.position.tisa.kernels, 1);
  non_negative("model.position.tisa.init_offset_std", m.position.tisa.init_offset_std);
  non_negative("model.position.tisa.init_amplitude_std", m.position.tisa.init_amplitude_std);
  non_negative("model.position.tisa.init_sharpness_std", m.position.tisa.init_sharpness_std);
  if (!std::isfinite(m.position.tisa.init_amplitude_mean))
    add("model.position.tisa.init_amplitude_mean", "must be finite");
  if (!std::isfinite(m.position.tisa.init_sharpness_mean))
    add("model.position.tisa.init_sharpness_mean", "must be finite");
  const PositionConfig& pos = m.position;
  const bool legacy_model = (pos.relative == RelativeScheme::kShaw && !pos.shaw.per_layer && !pos.shaw.per_attention_module) ||
                            (pos.relative == RelativeScheme::kTisa && !pos.tisa.per_layer);
  const bool legacy_module = pos.relative == RelativeScheme::kShaw && pos.shaw.per_attention_module;
  if ((legacy_model && pos.sharing != PositionSharing::kModel && pos.sharing != PositionSharing::kPerLayer) ||
      (legacy_module && pos.sharing != PositionSharing::kPerModule && pos.sharing != PositionSharing::kPerLayer))
    add("model.position.sharing", "contradicts the legacy per_layer / per_attention_module switch of the scheme; "
                                  "set only model.position.sharing");
  positive("model.position.rope.base", pos.rope.base);
  if (pos.relative == RelativeScheme::kRope && m.num_attention_heads >= 1 &&
      (m.hidden_size / m.num_attention_heads) % 2 != 0)
    add("model.position.relative", "rope needs an even head size (hidden_size / num_attention_heads), got " +
                                       std::to_string(m.hidden_size / m.num_attention_heads));
  at_least("model.position.t5.num_buckets", pos.t5.num_buckets, 4);
  if (pos.t5.num_buckets % 2 != 0)
    add("model.position.t5.num_buckets", "must be even (half per direction), got " + std::to_string(pos.t5.num_buckets));
  if (pos.t5.max_distance <= pos.t5.num_buckets / 4)
    add("model.position.t5.max_distance", "must be > num_buckets / 4 (" + std::to_string(pos.t5.num_buckets / 4) +
                                              "), got " + std::to_string(pos.t5.max_distance));
  at_least("model.position.fire.hidden_size", pos.fire.hidden_size, 1);
  positive("model.position.fire.init_c", pos.fire.init_c);
  if (!(pos.fire.init_threshold >= 1) || std::isinf(pos.fire.init_threshold))
    add("model.position.fire.init_threshold", "must be a finite number >= 1, got " + format_double(pos.fire.init_threshold));

  // data (SPEC §5)
  const DataConfig& d = c.data;
  at_least("data.max_seq_length", d.max_seq_length, 4);  // [CLS] a [SEP] b [SEP] needs room
  if (m.max_position_embeddings >= 1 && d.max_seq_length > m.max_position_embeddings)
    add("data.max_seq_length", "must be <= model.max_position_embeddings (" +
                                   std::to_string(m.max_position_embeddings) + "), got " +
                                   std::to_string(d.max_seq_length));
  at_least("data.max_predictions_per_seq", d.max_predictions_per_seq, 1);
  if (!(d.masked_lm_prob > 0 && d.masked_lm_prob < 1))
    add("data.masked_lm_prob", "must be in (0, 1), got " + format_double(d.masked_lm_prob));
  if (!(d.short_seq_prob >= 0 && d.short_seq_prob <= 1))
    add("data.short_seq_prob", "must be in [0, 1], got " + format_double(d.short_seq_prob));
  at_least("data.max_ngram", d.max_ngram, 1);
  at_least("data.dupe_factor", d.dupe_factor, 1);
  at_least("data.workers", d.workers, 1);
  at_most("data.workers", d.workers, kMaxThreads, "threads that build batches");
  at_least("data.prefetch_batches", d.prefetch_batches, 1);
  at_most("data.prefetch_batches", d.prefetch_batches, 4096, "batches held in memory");

  // optimizer, schedule (SPEC §7)
  const OptimizerConfig& o = c.optimizer;
  positive("optimizer.lr", o.lr);
  probability("optimizer.beta1", o.beta1);
  probability("optimizer.beta2", o.beta2);
  positive("optimizer.eps", o.eps);
  non_negative("optimizer.weight_decay", o.weight_decay);
  non_negative("optimizer.clip_norm", o.clip_norm);
  const ScheduleConfig& s = c.schedule;
  at_least("schedule.warmup_steps", s.warmup_steps, 0);
  probability("schedule.warmup_fraction", s.warmup_fraction);
  if (s.warmup_steps > c.training.steps && c.training.steps >= 1)
    add("schedule.warmup_steps", "must be <= training.steps (" + std::to_string(c.training.steps) + "), got " +
                                     std::to_string(s.warmup_steps));

  // training
  const TrainingConfig& t = c.training;
  at_least("training.steps", t.steps, 1);
  at_least("training.batch_size", t.batch_size, 1);
  at_least("training.accumulation", t.accumulation, 1);
  at_least("training.eval_interval", t.eval_interval, 0);
  at_least("training.eval_batches", t.eval_batches, 0);
  at_least("training.checkpoint_interval", t.checkpoint_interval, 0);
  at_least("training.keep_checkpoints", t.keep_checkpoints, 1);
  at_least("training.log_interval", t.log_interval, 1);
  at_least("training.seed", t.seed, 0);
  at_least("training.threads", t.threads, 0);
  at_most("training.threads", t.threads, kMaxThreads, "intra-op threads; 0 = one per core");
  at_least("training.max_bad_steps", t.max_bad_steps, 1);

  // glue (SPEC §8)
  const GlueConfig& g = c.glue;
  if (!g.task.empty() && !data::find_glue_task_or_null(g.task)) {
    std::string known;
    for (const auto& t : data::glue_tasks()) known += (known.empty() ? "" : ", ") + t.name;
    add("glue.task", "unknown GLUE task '" + g.task + "' (expected one of: " + known + ")");
  }
  positive("glue.lr", g.lr);
  at_least("glue.batch_size", g.batch_size, 1);
  at_least("glue.steps", g.steps, 0);
  if (g.steps == 0) positive("glue.epochs", g.epochs);
  at_least("glue.warmup_steps", g.warmup_steps, 0);
  probability("glue.warmup_fraction", g.warmup_fraction);
  at_least("glue.max_length", g.max_length, 3);
  if (m.max_position_embeddings >= 1 && g.max_length > m.max_position_embeddings)
    add("glue.max_length", "must be <= model.max_position_embeddings (" + std::to_string(m.max_position_embeddings) +
                               "), got " + std::to_string(g.max_length));
  non_negative("glue.weight_decay", g.weight_decay);
  probability("glue.classifier_dropout", g.classifier_dropout);
  at_least("glue.eval_interval", g.eval_interval, 0);
  at_least("glue.eval_batch_size", g.eval_batch_size, 1);
  return problems;
}

void validate_or_throw(const Config& config, const std::string& source) {
  std::vector<ConfigProblem> problems = validate(config);
  if (problems.empty()) return;
  std::vector<std::string> lines;
  for (const auto& p : problems) lines.push_back(source + ": " + p.key + ": " + p.message);
  throw Error(join(lines, "\n"));
}

}  // namespace tisa::config
