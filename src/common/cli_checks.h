// CLI11 checks for the options of tisa-text and tisa-nn, each failing with one sentence that says
// what was expected ("--batch-size: expected an integer >= 1, got 'abc'"); CLI11's own number
// checks print a 309-digit double bound instead. Header-only: only the executables use CLI11.
#pragma once
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace tisa::cli {

namespace detail {
template <class T>
struct Same {
  using type = T;
};
}  // namespace detail

// An integer in [lo, hi] (decimal, nothing after it) for the integer option `option`: its type
// bounds the range too, so that a value the variable cannot hold is refused, not wrapped.
template <class T>
CLI::Validator integer_between(const T& option, typename detail::Same<T>::type lo, typename detail::Same<T>::type hi) {
  (void)option;
  constexpr long long kLongMax = std::numeric_limits<long long>::max();
  const long long low = static_cast<long long>(lo);
  const long long high = static_cast<unsigned long long>(hi) > static_cast<unsigned long long>(kLongMax)
                             ? kLongMax
                             : static_cast<long long>(hi);
  const std::string range = hi == std::numeric_limits<T>::max()
                                ? "an integer >= " + std::to_string(lo)
                                : "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [low, high, range](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || errno == ERANGE || v < low || v > high)
          return "expected " + range + ", got '" + text + "'";
        return "";
      },
      "INT", "integer_between");
}

// An integer >= `min` that `option` can hold.
template <class T>
CLI::Validator integer_at_least(const T& option, typename detail::Same<T>::type min) {
  return integer_between(option, min, std::numeric_limits<T>::max());
}

// A finite number > 0 (a double option).
inline CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(v > 0) || v > std::numeric_limits<double>::max())
          return "expected a positive number, got '" + text + "'";
        return "";
      },
      "NUMBER", "positive_number");
}

// --device: cpu or cuda (whether CUDA is there is checked when the device is opened).
inline CLI::Validator device_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text == "cpu" || text == "cuda" ? "" : "expected cpu or cuda, got '" + text + "'";
      },
      "{cpu,cuda}", "device_name");
}

}  // namespace tisa::cli
