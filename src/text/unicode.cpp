// Unicode helpers over utf8proc; see unicode.h for the behaviours reproduced.
#include "text/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <vector>

namespace tisa::text::unicode {

char32_t decode_one(std::string_view s, size_t i, size_t& len) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  const unsigned char c = p[i];
  len = 1;
  if (c < 0x80) return c;
  auto cont = [&](size_t k) { return i + k < n && (p[i + k] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) {
    if (cont(1)) {
      len = 2;
      return (char32_t(c & 0x1F) << 6) | (p[i + 1] & 0x3F);
    }
  } else if (c >= 0xE0 && c <= 0xEF) {
    if (cont(1) && cont(2)) {
      const char32_t cp = (char32_t(c & 0x0F) << 12) | (char32_t(p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F);
      if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) {
        len = 3;
        return cp;
      }
    }
  } else if (c >= 0xF0 && c <= 0xF4) {
    if (cont(1) && cont(2) && cont(3)) {
      const char32_t cp = (char32_t(c & 0x07) << 18) | (char32_t(p[i + 1] & 0x3F) << 12) |
                          (char32_t(p[i + 2] & 0x3F) << 6) | (p[i + 3] & 0x3F);
      if (cp >= 0x10000 && cp <= 0x10FFFF) {
        len = 4;
        return cp;
      }
    }
  }
  return kReplacement;
}

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0, len = 0; i < s.size(); i += len) out.push_back(decode_one(s, i, len));
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

bool is_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

size_t count_code_points(std::string_view utf8) {
  size_t n = 0;
  for (unsigned char c : utf8) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_python_space(char32_t c) {
  if (c < 0x80) return (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20);
  switch (c) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

bool is_python_digit(char32_t c) {
  if (c >= '0' && c <= '9') return true;
  if (c < 0x80) return false;
  if (utf8proc_category(int32_t(c)) == UTF8PROC_CATEGORY_ND) return true;
  // Numeric_Type=Digit (not decimal): superscripts, subscripts, circled/parenthesised/dotted
  // digits, dingbat digits, Ethiopic, Tai Tham, Kharoshthi, Rumi, Brahmi, digit commas.
  static constexpr char32_t kRanges[][2] = {
      {0xB2, 0xB3},       {0xB9, 0xB9},       {0x1369, 0x1371},   {0x19DA, 0x19DA},
      {0x2070, 0x2070},   {0x2074, 0x2079},   {0x2080, 0x2089},   {0x2460, 0x2468},
      {0x2474, 0x247C},   {0x2488, 0x2490},   {0x24EA, 0x24EA},   {0x24F5, 0x24FD},
      {0x24FF, 0x24FF},   {0x2776, 0x277E},   {0x2780, 0x2788},   {0x278A, 0x2792},
      {0x10A40, 0x10A43}, {0x10E60, 0x10E68}, {0x11052, 0x1105A}, {0x1F100, 0x1F10A}};
  for (const auto& r : kRanges)
    if (c >= r[0] && c <= r[1]) return true;
  return false;
}

namespace {

utf8proc_category_t cat(char32_t c) { return utf8proc_category(int32_t(c)); }

bool is_cased(char32_t c) {
  const auto k = cat(c);
  if (k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT) return true;
  return utf8proc_tolower(int32_t(c)) != int32_t(c) || utf8proc_toupper(int32_t(c)) != int32_t(c);
}

bool is_case_ignorable(char32_t c) {
  switch (c) {
    case 0x27: case 0x2E: case 0x3A: case 0x5E: case 0x60: case 0xA8: case 0xAD: case 0xAF:
    case 0xB4: case 0xB7: case 0xB8: case 0x387: case 0x5F4: case 0x2018: case 0x2019:
    case 0x2024: case 0x2027: case 0xFE13: case 0xFE52: case 0xFE55: case 0xFF07: case 0xFF0E:
    case 0xFF1A:
      return true;
    default:
      break;
  }
  const auto k = cat(c);
  return k == UTF8PROC_CATEGORY_MN || k == UTF8PROC_CATEGORY_ME || k == UTF8PROC_CATEGORY_CF ||
         k == UTF8PROC_CATEGORY_LM || k == UTF8PROC_CATEGORY_SK;
}

// CPython's handle_capital_sigma: \p{cased}\p{case-ignorable}* Σ !(\p{case-ignorable}*\p{cased}).
bool final_sigma(std::u32string_view s, size_t i) {
  size_t j = i;
  char32_t c = 0;
  bool found = false;
  while (j > 0) {
    c = s[--j];
    if (!is_case_ignorable(c)) {
      found = true;
      break;
    }
  }
  if (!found || !is_cased(c)) return false;
  for (size_t k = i + 1; k < s.size(); ++k) {
    if (!is_case_ignorable(s[k])) return !is_cased(s[k]);
  }
  return true;
}

void canonical_order(std::u32string& s) {
  // Stable sort of each run of non-starters by combining class (canonical ordering algorithm).
  size_t i = 0;
  while (i < s.size()) {
    if (combining_class(s[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && combining_class(s[j]) != 0) ++j;
    if (j - i > 1)
      std::stable_sort(s.begin() + long(i), s.begin() + long(j),
                       [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
}

std::u32string decompose(std::u32string_view s, bool compat) {
  std::u32string out;
  out.reserve(s.size() + 8);
  const utf8proc_option_t opts = utf8proc_option_t(UTF8PROC_DECOMPOSE | (compat ? UTF8PROC_COMPAT : 0));
  int32_t buf[32];
  for (char32_t c : s) {
    if (c < 0x80) {
      out.push_back(c);
      continue;
    }
    int boundclass = 0;
    const auto n = utf8proc_decompose_char(int32_t(c), buf, 32, opts, &boundclass);
    if (n <= 0 || n > 32) {
      out.push_back(c);
      continue;
    }
    for (int k = 0; k < n; ++k) out.push_back(char32_t(buf[k]));
  }
  canonical_order(out);
  return out;
}

}  // namespace

std::u32string python_lower(std::u32string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char32_t c = s[i];
    if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
    } else if (c == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE -> i + COMBINING DOT ABOVE
      out.push_back(U'i');
      out.push_back(0x307);
    } else if (c == 0x3A3) {
      out.push_back(final_sigma(s, i) ? 0x3C2 : 0x3C3);
    } else {
      out.push_back(char32_t(utf8proc_tolower(int32_t(c))));
    }
  }
  return out;
}

const char* category(char32_t c) { return utf8proc_category_string(int32_t(c)); }

bool is_category_c(char32_t c) {
  switch (cat(c)) {
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO: case UTF8PROC_CATEGORY_CN:
      return true;
    default:
      return false;
  }
}
bool is_category_mn(char32_t c) { return cat(c) == UTF8PROC_CATEGORY_MN; }
bool is_category_zs(char32_t c) { return cat(c) == UTF8PROC_CATEGORY_ZS; }
bool is_category_p(char32_t c) {
  switch (cat(c)) {
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return true;
    default:
      return false;
  }
}

int combining_class(char32_t c) {
  if (c < 0x300) return 0;
  return utf8proc_get_property(int32_t(c))->combining_class;
}

std::u32string nfd(std::u32string_view s) { return decompose(s, false); }
std::u32string nfkd(std::u32string_view s) { return decompose(s, true); }

std::u32string nfc(std::u32string_view s) {
  std::u32string d = decompose(s, false);
  if (d.empty()) return d;
  std::vector<int32_t> buf(d.begin(), d.end());
  const auto n = utf8proc_normalize_utf32(buf.data(), utf8proc_ssize_t(buf.size()),
                                          utf8proc_option_t(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
  if (n < 0) return d;
  return std::u32string(buf.begin(), buf.begin() + n);
}

}  // namespace tisa::text::unicode
