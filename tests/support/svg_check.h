// A small XML well-formedness check for the SVG files tisa-train writes: every tag is closed in
// order, attributes are quoted, '&' starts an entity, the root element is <svg>. Not a full XML
// parser (no DTDs, no CDATA), which our writer never emits.
#pragma once
#include <cctype>
#include <string>
#include <vector>

namespace tisa::test {

inline bool svg_well_formed(const std::string& doc, std::string* why = nullptr) {
  auto fail = [&](const std::string& msg, size_t at) {
    if (why) *why = msg + " at byte " + std::to_string(at);
    return false;
  };
  std::vector<std::string> open;
  bool root_seen = false;
  size_t i = 0;
  while (i < doc.size()) {
    char c = doc[i];
    if (c == '&') {
      size_t semi = doc.find(';', i);
      if (semi == std::string::npos || semi - i > 8) return fail("bare '&'", i);
      i = semi + 1;
      continue;
    }
    if (c == '>') return fail("stray '>'", i);
    if (c != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c))) return fail("text outside the root", i);
      ++i;
      continue;
    }
    if (doc.compare(i, 5, "<?xml") == 0) {
      size_t end = doc.find("?>", i);
      if (end == std::string::npos) return fail("unterminated declaration", i);
      i = end + 2;
      continue;
    }
    if (doc.compare(i, 4, "<!--") == 0) {
      size_t end = doc.find("-->", i);
      if (end == std::string::npos) return fail("unterminated comment", i);
      i = end + 3;
      continue;
    }
    bool closing = i + 1 < doc.size() && doc[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    size_t name_start = j;
    while (j < doc.size() && (std::isalnum(static_cast<unsigned char>(doc[j])) || doc[j] == ':' || doc[j] == '-' || doc[j] == '_'))
      ++j;
    std::string name = doc.substr(name_start, j - name_start);
    if (name.empty()) return fail("tag without a name", i);
    // Attributes: name="value" pairs up to '>' or '/>'.
    bool self_closing = false;
    while (true) {
      while (j < doc.size() && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
      if (j >= doc.size()) return fail("unterminated tag <" + name, i);
      if (doc[j] == '>') { ++j; break; }
      if (doc[j] == '/' && j + 1 < doc.size() && doc[j + 1] == '>') { self_closing = true; j += 2; break; }
      if (closing) return fail("attributes on a closing tag", j);
      size_t a = j;
      while (j < doc.size() && doc[j] != '=' && !std::isspace(static_cast<unsigned char>(doc[j])) && doc[j] != '>') ++j;
      if (j == a || j >= doc.size() || doc[j] != '=') return fail("attribute without a value in <" + name, j);
      ++j;
      if (j >= doc.size() || (doc[j] != '"' && doc[j] != '\'')) return fail("unquoted attribute in <" + name, j);
      char q = doc[j];
      size_t end = doc.find(q, j + 1);
      if (end == std::string::npos) return fail("unterminated attribute in <" + name, j);
      if (doc.find('<', j + 1) < end) return fail("'<' inside an attribute of <" + name, j);
      j = end + 1;
    }
    if (closing) {
      if (open.empty() || open.back() != name) return fail("</" + name + "> does not close <" + (open.empty() ? "" : open.back()) + ">", i);
      open.pop_back();
    } else {
      if (open.empty()) {
        if (root_seen) return fail("second root element", i);
        if (name != "svg") return fail("root element is <" + name + ">, not <svg>", i);
        root_seen = true;
      }
      if (!self_closing) open.push_back(name);
    }
    i = j;
  }
  if (!open.empty()) return fail("<" + open.back() + "> never closed", doc.size());
  if (!root_seen) return fail("no <svg> element", 0);
  return true;
}

}  // namespace tisa::test
