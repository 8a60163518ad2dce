// The scheme catalog, scheme settings problems and PositionConfig; see position_settings.h.
#include "config/position_settings.h"

#include <cmath>

#include "common/error.h"
#include "config/config.h"
#include "config/value_format.h"

namespace tisa::config {
namespace {

std::vector<SchemeCatalogEntry>& catalog() {
  static std::vector<SchemeCatalogEntry> entries = [] {
    std::vector<SchemeCatalogEntry> e;
    e.push_back({"none", nullptr});
    return e;
  }();
  return entries;
}

}  // namespace

// ---------------------------------------------------------------------------- catalog
void install_position_schemes(std::vector<SchemeCatalogEntry> entries) {
  TISA_CHECK(!entries.empty() && entries.front().name == "none" && !entries.front().make_settings,
             "position scheme table must start with \"none\" (no settings)");
  for (size_t i = 0; i < entries.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      TISA_CHECK(entries[j].name != entries[i].name, "position scheme '" + entries[i].name + "' is listed twice");
    if (entries[i].make_settings)
      TISA_CHECK(entries[i].make_settings()->name() == entries[i].name,
                 "position scheme '" + entries[i].name + "': its settings are named '" +
                     entries[i].make_settings()->name() + "'");
  }
  catalog() = std::move(entries);
}

const std::vector<SchemeCatalogEntry>& position_schemes() { return catalog(); }

std::vector<std::string> position_scheme_names() {
  std::vector<std::string> names;
  for (const auto& e : catalog()) names.push_back(e.name);
  return names;
}

const SchemeCatalogEntry* find_position_scheme(const std::string& name) {
  for (const auto& e : catalog())
    if (e.name == name) return &e;
  return nullptr;
}

// ---------------------------------------------------------------------------- problems
SettingsProblems::SettingsProblems(const std::string& scheme, std::vector<ConfigProblem>& out)
    : prefix_("model.position." + scheme + "."), out_(out) {}

void SettingsProblems::add(const std::string& field, const std::string& message) {
  out_.push_back({prefix_ + field, message});
}

void SettingsProblems::add_key(const std::string& key, const std::string& message) { out_.push_back({key, message}); }

void SettingsProblems::at_least(const std::string& field, int64_t value, int64_t minimum) {
  if (value < minimum) add(field, "must be >= " + std::to_string(minimum) + ", got " + std::to_string(value));
}

void SettingsProblems::at_most(const std::string& field, int64_t value, int64_t maximum, const std::string& why) {
  if (value > maximum)
    add(field, "must be <= " + std::to_string(maximum) + " (" + why + "), got " + std::to_string(value));
}

void SettingsProblems::positive(const std::string& field, double value) {
  if (!(value > 0) || std::isinf(value)) add(field, "must be a positive finite number, got " + number(value));
}

void SettingsProblems::non_negative(const std::string& field, double value) {
  if (!(value >= 0) || std::isinf(value)) add(field, "must be a finite number >= 0, got " + number(value));
}

void SettingsProblems::finite(const std::string& field, double value) {
  if (!std::isfinite(value)) add(field, "must be finite");
}

std::string SettingsProblems::number(double value) { return format_double(value); }

// ---------------------------------------------------------------------------- PositionConfig
PositionConfig::PositionConfig() {
  for (const auto& e : catalog())
    if (e.make_settings) add_settings(e.make_settings());
}

PositionConfig::PositionConfig(const PositionConfig& other)
    : absolute(other.absolute), relative(other.relative), sharing(other.sharing) {
  for (const auto& s : other.sections_) sections_.push_back({s.help, s.settings->clone()});
}

PositionConfig& PositionConfig::operator=(const PositionConfig& other) {
  if (this != &other) {
    PositionConfig copy(other);
    *this = std::move(copy);
  }
  return *this;
}

SchemeSettings* PositionConfig::find_settings(const std::string& name) {
  for (auto& s : sections_)
    if (name == s.settings->name()) return s.settings.get();
  return nullptr;
}

const SchemeSettings* PositionConfig::find_settings(const std::string& name) const {
  return const_cast<PositionConfig*>(this)->find_settings(name);
}

std::vector<const SchemeSettings*> PositionConfig::all_settings() const {
  std::vector<const SchemeSettings*> out;
  for (const auto& s : sections_) out.push_back(s.settings.get());
  return out;
}

PositionSharing PositionConfig::effective_sharing() const {
  if (const SchemeSettings* selected = find_settings(relative))
    if (std::optional<PositionSharing> legacy = selected->legacy_sharing()) return *legacy;
  return sharing;
}

SchemeSettings& PositionConfig::add_settings(std::unique_ptr<SchemeSettings> settings) {
  std::string help = std::string("settings of the ") + settings->name() + " scheme";
  sections_.push_back({std::move(help), std::move(settings)});
  return *sections_.back().settings;
}

void PositionConfig::settings_type_mismatch(const char* name) {
  throw Error(std::string("position scheme '") + name + "': its settings have another type than requested");
}

}  // namespace tisa::config
