// Bench labels of position terms ([<computation>-]<position>[-<preset>], see bench.h): every part
// is asked of the registry or of the scheme itself, so that a new scheme needs no line here.
#include <sstream>

#include "bench/bench.h"
#include "common/error.h"
#include "config/position_variant.h"
#include "model/position/registry.h"

namespace tisa::bench {
namespace {

// "absolute", "<scheme>", "absolute+<scheme>" or "absolute_<scheme>" → the table and the scheme
// (config/position_variant.h).
bool parse_position(const std::string& text, bool& absolute, std::string& relative) {
  const auto variant = config::parse_position_variant(text);
  if (!variant) return false;
  absolute = variant->absolute;
  relative = variant->relative;
  return true;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::string apply_scheme_label(const std::string& label, config::ModelConfig& m) {
  std::vector<std::string> parts;
  std::stringstream ss(label);
  for (std::string part; std::getline(ss, part, '-');) parts.push_back(part);
  // The position part is the first or the second; a computation may precede it, a preset follow.
  bool absolute = false;
  std::string relative;
  size_t at = 0;
  while (at < parts.size() && at < 2 && !parse_position(parts[at], absolute, relative)) ++at;
  if (parts.empty() || at >= std::min<size_t>(parts.size(), 2) || parts.size() > at + 2)
    throw Error("bench --scheme: unknown scheme '" + label + "' (expected [<computation>-]<position>[-<preset>], " +
                "position = absolute, <scheme>, absolute+<scheme> or absolute_<scheme>; schemes: " +
                joined(config::position_scheme_names()) + ")");
  const std::string computation = at == 1 ? parts[0] : "";
  const std::string preset = at + 1 < parts.size() ? parts[at + 1] : "";
  m.position.absolute = absolute;
  m.position.relative = relative;
  if (!preset.empty()) {
    config::SchemeSettings* settings = m.position.find_settings(relative);
    if (!settings || !settings->apply_preset(preset, m))
      throw Error("bench --scheme '" + label + "': scheme " + relative + " has no preset '" + preset + "'");
  }
  if (!computation.empty()) {
    const auto modules = model::make_relative_schemes(relative, m, 1);
    if (modules.empty() || !modules.front()->use_computation(computation)) {
      const auto known = modules.empty() ? std::vector<std::string>{} : modules.front()->computations();
      throw Error("bench --scheme '" + label + "': scheme " + relative + " has no computation '" + computation + "' (" +
                  (known.empty() ? "it computes its terms one way" : "it has: " + joined(known)) + ")");
    }
  }
  return computation;
}

}  // namespace tisa::bench
