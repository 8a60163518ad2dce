// Position variants by name; see position_variant.h.
#include "config/position_variant.h"

#include <utility>

#include "common/error.h"
#include "config/config.h"
#include "config/position_settings.h"

namespace tisa::config {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::optional<PositionVariant> parse_position_variant(const std::string& name) {
  if (name == "absolute") return PositionVariant{true, "none"};
  for (const std::string prefix : {"absolute_", "absolute+"})
    if (name.compare(0, prefix.size(), prefix) == 0) {
      const std::string scheme = name.substr(prefix.size());
      if (find_position_scheme(scheme)) return PositionVariant{true, scheme};
    }
  if (find_position_scheme(name)) return PositionVariant{false, name};
  return std::nullopt;
}

void apply_position_variant(const std::string& name, ModelConfig& model, const std::string& where) {
  const auto variant = parse_position_variant(name);
  if (!variant)
    throw Error(where + ": unknown position variant '" + name +
                "' (expected absolute, <scheme> or absolute_<scheme>; schemes: " + joined(position_scheme_names()) +
                ")");
  model.position.absolute = variant->absolute;
  model.position.relative = variant->relative;
}

std::string position_variant_name(const ModelConfig& model) {
  const auto& p = model.position;
  if (!p.absolute) return p.relative;
  return p.relative == "none" ? "absolute" : "absolute_" + p.relative;
}

std::vector<std::string> position_variant_names() {
  std::vector<std::string> out{"absolute"};
  for (const auto& scheme : position_scheme_names()) {
    if (scheme != "none") out.push_back("absolute_" + scheme);
    out.push_back(scheme);
  }
  return out;
}

std::pair<int, std::string> position_variant_order(const std::string& name) {
  const auto variant = parse_position_variant(name);
  if (!variant) return {1 << 20, name};
  if (variant->absolute && variant->relative == "none") return {0, ""};
  const auto names = position_scheme_names();
  int place = 0;
  while (names[static_cast<size_t>(place)] != variant->relative) ++place;
  return {2 * (place + 1) + (variant->absolute ? 0 : 1), ""};
}

}  // namespace tisa::config
