// Config structs ⇄ JSON (the `tisa_train` block of config.json, bench specs, eval summaries):
// JsonWriter is the visitor that writes; reading turns JSON into the located tree and goes
// through the same Reader as YAML (tree_reader.h), so unknown keys and wrong types are errors.
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "config/config_loader.h"
#include "config/tree_reader.h"
#include "config/value_format.h"

namespace tisa::config {
namespace {

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
    out_[key] = name_of(member, names);
  }
  void choice(const char* key, std::string& member, const std::vector<std::string>&, const char*) {
    out_[key] = member;
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

namespace {
// Any config struct through its visit() list (non-const, hence the copy) as nested JSON.
template <class Section>
nlohmann::json section_to_json(Section copy) {
  nlohmann::json out;
  JsonWriter writer(out);
  copy.visit(writer);
  return out;
}
}  // namespace

nlohmann::json model_config_to_json(const ModelConfig& model) { return section_to_json(model); }

nlohmann::json config_to_json(const Config& config) { return section_to_json(config); }

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

nlohmann::json position_config_to_json(const PositionConfig& position) { return section_to_json(position); }

PositionConfig position_config_from_json(const nlohmann::json& json, const std::string& source,
                                         const std::string& key_prefix) {
  if (!json.is_object()) throw Error(source + ": " + key_prefix + ": expected an object");
  TreeNode root = from_json(json, Location{source, "", 0, 0});
  PositionConfig position;
  std::vector<std::string> errors;
  Reader reader(&root, key_prefix + ".", errors);
  position.visit(reader);
  reader.check_unknown();
  if (!errors.empty()) throw Error(join(errors, "\n"));
  return position;
}

}  // namespace tisa::config
