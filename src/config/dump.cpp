// The config as text for people: the resolved config as YAML with help comments (dump_yaml), the
// table of keys with types and defaults (describe_defaults) and every field flattened to
// "key.path" = value (flatten_config, for the resume and architecture checks). One visitor each.
#include <algorithm>
#include <array>
#include <sstream>
#include <type_traits>

#include "common/fs.h"
#include "config/config_loader.h"
#include "config/value_format.h"
#include "config/yaml_tree.h"

namespace tisa::config {
namespace {

template <class T> const char* type_name() {
  if constexpr (std::is_same_v<T, int64_t>) return "int";
  else if constexpr (std::is_same_v<T, double>) return "float";
  else if constexpr (std::is_same_v<T, bool>) return "bool";
  else return "string";
}

// Emits YAML with help comments.
class YamlWriter {
 public:
  explicit YamlWriter(std::ostringstream& out, int indent = 0) : out_(out), indent_(indent) {}
  template <class T> void field(const char* key, T& member, const char* help) {
    line(key, format_value(member), help);
  }
  template <class E, size_t N> void choice(const char* key, E& member, const NameTable<E, N>& names, const char* help) {
    line(key, name_of(member, names), help);
  }
  void choice(const char* key, std::string& member, const std::vector<std::string>&, const char* help) {
    line(key, member, help);
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
    rows_.push_back({prefix_ + key, "{" + join(choices, "|") + "} = " + name_of(member, names), help});
  }
  void choice(const char* key, std::string& member, const std::vector<std::string>& names, const char* help) {
    rows_.push_back({prefix_ + key, "{" + join(names, "|") + "} = " + member, help});
  }
  template <class S> void section(const char* key, S& member, const char*) {
    Describer sub(rows_, prefix_ + key + ".");
    member.visit(sub);
  }

 private:
  std::vector<std::array<std::string, 3>>& rows_;
  std::string prefix_;
};

// Every field as (key path, value in its YAML form), in visit() order.
class Flattener {
 public:
  Flattener(std::vector<std::pair<std::string, std::string>>& out, std::string prefix)
      : out_(out), prefix_(std::move(prefix)) {}
  template <class T> void field(const char* key, T& member, const char*) {
    out_.emplace_back(prefix_ + key, format_value(member));
  }
  template <class E, size_t N> void choice(const char* key, E& member, const NameTable<E, N>& names, const char*) {
    out_.emplace_back(prefix_ + key, name_of(member, names));
  }
  void choice(const char* key, std::string& member, const std::vector<std::string>&, const char*) {
    out_.emplace_back(prefix_ + key, member);
  }
  template <class S> void section(const char* key, S& member, const char*) {
    Flattener sub(out_, prefix_ + key + ".");
    member.visit(sub);
  }

 private:
  std::vector<std::pair<std::string, std::string>>& out_;
  std::string prefix_;
};

}  // namespace

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

std::vector<std::pair<std::string, std::string>> flatten_config(const Config& config) {
  std::vector<std::pair<std::string, std::string>> out;
  Config copy = config;  // visit() is non-const; the Flattener only reads
  Flattener flattener(out, "");
  copy.visit(flattener);
  return out;
}

std::vector<std::pair<std::string, std::string>> flatten_model_config(const ModelConfig& model) {
  std::vector<std::pair<std::string, std::string>> out;
  ModelConfig copy = model;
  Flattener flattener(out, "model.");
  copy.visit(flattener);
  return out;
}

}  // namespace tisa::config
