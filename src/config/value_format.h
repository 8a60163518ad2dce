// Config values as text (internal to src/config/): the YAML form that dump_yaml() writes and the
// loader reads back exactly (doubles in their shortest round-trip form, strings double-quoted).
#pragma once
#include <cstdint>
#include <string>

namespace tisa::config {

// Shortest form that reads back to the same double; ".inf", "-.inf", ".nan"; always has a '.'
// or an exponent ("1.0", "1e-12").
std::string format_double(double v);
std::string format_value(int64_t v);
std::string format_value(double v);
std::string format_value(bool v);
std::string format_value(const std::string& v);  // "text", JSON-escaped (= YAML double-quoted)

}  // namespace tisa::config
