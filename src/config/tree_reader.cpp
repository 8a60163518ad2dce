// Located tree → typed structs; see tree_reader.h.
#include "config/tree_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <regex>

#include "common/error.h"

namespace tisa::config {
namespace {

const std::regex& int_pattern() {
  static const std::regex re("[-+]?[0-9]+");
  return re;
}
const std::regex& float_pattern() {
  static const std::regex re("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  return re;
}


}  // namespace

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

}  // namespace tisa::config
