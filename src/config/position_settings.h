// Settings of position schemes, owned by the schemes (STYLE §3, §4; issue 15): the config library
// knows no scheme. Each scheme of src/model/position/ declares its own settings struct in its
// header (fields listed once in visit(), checks in validate()) and names it in one line of the
// registry table (model/position/registry.cpp); the model library installs that table here at
// start-up (model::install_position_schemes(), an explicit call in main and in the test mains).
// Torch-free: this header and the catalog are part of tisa_core.
//
// What a scheme's settings struct looks like (model/position/rope.h):
//     struct RopeSettings {
//       static constexpr const char* kName = "rope";         // its section: model.position.rope
//       double base = 10000.0;
//       void visit(config::FieldVisitor& v) { v.field("base", base, "rotary base"); }
//       void validate(const config::ModelConfig& m, bool selected, config::SettingsProblems& p) const;
//     };
// and, optionally, `std::optional<PositionSharing> legacy_sharing() const` for a scheme whose old
// per-scheme switches still select the sharing (shaw, tisa), and
// `bool apply_preset(const std::string& preset, const ModelConfig& m)` with
// `static std::vector<std::string> presets()` for named sets of settings (shaw's "hf", as bench's
// label shaw-hf asks for; "tiny" for test-sized models).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tisa::config {

struct ModelConfig;

// How many sets of position parameters a model has (the same meaning for every scheme with
// parameters; parameter-free schemes always have one module):
//   per_layer  — one per layer application (num_hidden_layers × inner_group_num), as the TISA paper;
//   per_module — one per attention module (num_hidden_groups × inner_group_num), reused wherever
//                ALBERT reuses that module's weights (HF relative_key's layout);
//   model      — one set shared by every layer.
enum class PositionSharing { kPerLayer, kPerModule, kModel };

// One problem found by validate(): the key it concerns and what is wrong.
struct ConfigProblem {
  std::string key;      // e.g. "model.hidden_size"
  std::string message;  // e.g. "must be divisible by model.num_attention_heads (12), got 100"
};

// The visit() protocol of config.h, as a virtual interface, for the structs the config library
// reaches only through SchemeSettings (type erasure). Scalars only; every visitor of the config
// library forwards these to its templated field() (FieldVisitorFor below).
class FieldVisitor {
 public:
  virtual ~FieldVisitor() = default;
  virtual void field(const char* key, int64_t& member, const char* help) = 0;
  virtual void field(const char* key, double& member, const char* help) = 0;
  virtual void field(const char* key, bool& member, const char* help) = 0;
  virtual void field(const char* key, std::string& member, const char* help) = 0;
};

template <class V> class FieldVisitorFor final : public FieldVisitor {
 public:
  explicit FieldVisitorFor(V& v) : v_(v) {}
  void field(const char* key, int64_t& m, const char* help) override { v_.field(key, m, help); }
  void field(const char* key, double& m, const char* help) override { v_.field(key, m, help); }
  void field(const char* key, bool& m, const char* help) override { v_.field(key, m, help); }
  void field(const char* key, std::string& m, const char* help) override { v_.field(key, m, help); }

 private:
  V& v_;
};

// Collects the problems of one scheme's settings; keys are model.position.<scheme>.<field>.
class SettingsProblems {
 public:
  SettingsProblems(const std::string& scheme, std::vector<ConfigProblem>& out);
  void add(const std::string& field, const std::string& message);
  // A problem of another key (e.g. "model.position.relative").
  void add_key(const std::string& key, const std::string& message);
  void at_least(const std::string& field, int64_t value, int64_t minimum);
  // An upper bound checked before anything is allocated; `why` says what the bound protects.
  void at_most(const std::string& field, int64_t value, int64_t maximum, const std::string& why);
  void positive(const std::string& field, double value);      // finite and > 0
  void non_negative(const std::string& field, double value);  // finite and >= 0
  void finite(const std::string& field, double value);
  // A double as the config writes it (shortest round-trip form), for messages.
  static std::string number(double value);

 private:
  std::string prefix_;
  std::vector<ConfigProblem>& out_;
};

// One scheme's settings behind a virtual interface (what PositionConfig holds).
class SchemeSettings {
 public:
  virtual ~SchemeSettings() = default;
  virtual const char* name() const = 0;
  virtual std::unique_ptr<SchemeSettings> clone() const = 0;
  virtual void accept(FieldVisitor& v) = 0;
  // `selected`: this scheme is model.position.relative (cross-field rules that apply only then).
  virtual void validate(const ModelConfig& model, bool selected, SettingsProblems& problems) const = 0;
  virtual std::optional<PositionSharing> legacy_sharing() const { return std::nullopt; }
  // Sets the settings that `preset` names (e.g. shaw's "hf"); false when the scheme has no such preset.
  virtual bool apply_preset(const std::string& preset, const ModelConfig& model) {
    (void)preset;
    (void)model;
    return false;
  }
  // The names apply_preset() knows. "tiny" (settings for models of a few dozen positions: tests,
  // smoke runs) is the only one every caller may ask for; the test variants run each other preset.
  virtual std::vector<std::string> presets() const { return {}; }
  // The visit() protocol, so that the templated visitors treat settings as a section.
  template <class V> void visit(V& v) {
    FieldVisitorFor<V> adapter(v);
    accept(adapter);
  }
};

namespace detail {
template <class T, class = void> struct HasLegacySharing : std::false_type {};
template <class T>
struct HasLegacySharing<T, std::void_t<decltype(std::declval<const T&>().legacy_sharing())>> : std::true_type {};
template <class T, class = void> struct HasPreset : std::false_type {};
template <class T>
struct HasPreset<T, std::void_t<decltype(std::declval<T&>().apply_preset(std::declval<const std::string&>(),
                                                                            std::declval<const ModelConfig&>()))>>
    : std::true_type {};
template <class T, class = void> struct HasPresetList : std::false_type {};
template <class T> struct HasPresetList<T, std::void_t<decltype(T::presets())>> : std::true_type {};
}  // namespace detail

// The settings struct T of a scheme behind SchemeSettings.
template <class T> class SettingsOf final : public SchemeSettings {
 public:
  T value;
  const char* name() const override { return T::kName; }
  std::unique_ptr<SchemeSettings> clone() const override { return std::make_unique<SettingsOf<T>>(*this); }
  void accept(FieldVisitor& v) override { value.visit(v); }
  void validate(const ModelConfig& model, bool selected, SettingsProblems& problems) const override {
    value.validate(model, selected, problems);
  }
  std::optional<PositionSharing> legacy_sharing() const override {
    if constexpr (detail::HasLegacySharing<T>::value) return value.legacy_sharing();
    else return std::nullopt;
  }
  bool apply_preset(const std::string& preset, const ModelConfig& model) override {
    if constexpr (detail::HasPreset<T>::value) return value.apply_preset(preset, model);
    else return SchemeSettings::apply_preset(preset, model);
  }
  std::vector<std::string> presets() const override {
    if constexpr (detail::HasPresetList<T>::value) return T::presets();
    else return {};
  }
};

// ---------------------------------------------------------------------------- scheme catalog
// One known scheme: its name (the value of model.position.relative) and, when it has settings,
// the factory of their defaults (its section model.position.<name>).
struct SchemeCatalogEntry {
  std::string name;
  std::unique_ptr<SchemeSettings> (*make_settings)() = nullptr;  // null: no settings
};
template <class T> std::unique_ptr<SchemeSettings> make_settings() { return std::make_unique<SettingsOf<T>>(); }

// Installs the schemes (model::install_position_schemes() passes the registry's table); the
// first entry must be "none". Before any installation only "none" is known. Call it before any
// Config is built: a PositionConfig holds the settings of the schemes known when it is made.
void install_position_schemes(std::vector<SchemeCatalogEntry> entries);
const std::vector<SchemeCatalogEntry>& position_schemes();
// Names in table order ("none", "shaw", ...).
std::vector<std::string> position_scheme_names();
// Null when `name` is not installed.
const SchemeCatalogEntry* find_position_scheme(const std::string& name);

}  // namespace tisa::config
