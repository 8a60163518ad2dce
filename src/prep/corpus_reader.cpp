// Corpus readers and the sentence splitter (rules in corpus_reader.h).
#include "prep/corpus_reader.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/error.h"

namespace tisa::prep {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// Collapses runs of whitespace to one space and trims.
std::string collapse_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (char c : s) {
    if (is_space(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// Closing quotes/brackets at s[i]: returns their byte length (0 if none).
size_t closing_at(std::string_view s, size_t i) {
  const char c = s[i];
  if (c == '"' || c == '\'' || c == ')' || c == ']') return 1;
  if (s.compare(i, 3, "\xE2\x80\x9D") == 0 || s.compare(i, 3, "\xE2\x80\x99") == 0) return 3;  // ” ’
  return 0;
}

// True when s[i] begins what may start a sentence.
bool sentence_start_at(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (std::isupper(c) || std::isdigit(c)) return true;
  if (c == '"' || c == '\'' || c == '(' || c == '[') return true;
  return s.compare(i, 3, "\xE2\x80\x9C") == 0 || s.compare(i, 3, "\xE2\x80\x98") == 0;  // “ ‘
}

const std::set<std::string_view>& abbreviations() {
  static const std::set<std::string_view> a = {
      "Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "Prof", "Rev", "Gen", "Col", "Capt", "Lt", "Sgt",
      "Hon", "Gov", "Mt", "Ft", "vs", "etc", "No", "Vol", "Fig", "Jan", "Feb", "Mar", "Apr", "Jun",
      "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec", "Inc", "Ltd", "Co", "Corp", "e.g", "i.e"};
  return a;
}

// The word ending right before position `dot` (back to the previous space or opening bracket).
std::string_view word_before(std::string_view s, size_t dot) {
  size_t b = dot;
  while (b > 0 && !is_space(s[b - 1]) && s[b - 1] != '(' && s[b - 1] != '"') --b;
  return s.substr(b, dot - b);
}

bool is_wikitext_title(std::string_view line) {
  std::string_view t = trim(line);
  return t.size() >= 5 && starts_with(t, "= ") && ends_with(t, " =") && !starts_with(t, "= =");
}
bool is_wikitext_heading(std::string_view line) { return starts_with(trim(line), "= ="); }

bool is_chapter_heading(std::string_view para) {
  if (para.size() >= 60) return false;
  std::string upper;
  for (char c : para) upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  for (std::string_view kw : {"CHAPTER ", "BOOK ", "PART ", "STAVE ", "VOLUME "})
    if (starts_with(upper, kw)) {
      // keyword + one "word" (roman/arabic numeral or number word), optionally ". Title" / ": …"
      std::string_view rest = std::string_view(upper).substr(kw.size());
      const size_t end = rest.find_first_of(" .:");
      const std::string_view num = rest.substr(0, end);
      return !num.empty() && num.size() <= 12 &&
             std::all_of(num.begin(), num.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
    }
  return false;
}

void add_paragraph(TextDocument& doc, std::string_view para) {
  for (auto& s : split_sentences(para)) doc.push_back(std::move(s));
}

std::vector<TextDocument> read_albert(const std::vector<std::string_view>& lines) {
  std::vector<TextDocument> docs(1);
  for (auto line : lines) {
    const std::string_view t = trim(line);
    if (t.empty()) {
      if (!docs.back().empty()) docs.emplace_back();
      continue;
    }
    docs.back().push_back(collapse_spaces(t));
  }
  return docs;
}

std::vector<TextDocument> read_wikitext(const std::vector<std::string_view>& lines) {
  std::vector<TextDocument> docs(1);
  for (auto line : lines) {
    if (trim(line).empty() || is_wikitext_heading(line)) continue;
    if (is_wikitext_title(line)) {
      if (!docs.back().empty()) docs.emplace_back();
      continue;
    }
    add_paragraph(docs.back(), wikitext_detokenize(line));
  }
  return docs;
}

std::vector<TextDocument> read_gutenberg(const std::vector<std::string_view>& all) {
  size_t begin = 0, end = all.size();
  for (size_t i = 0; i < all.size(); ++i) {
    if (starts_with(all[i], "*** START OF") || starts_with(all[i], "***START OF")) {
      begin = i + 1;
      break;
    }
  }
  for (size_t i = begin; i < all.size(); ++i)
    if (starts_with(all[i], "*** END OF") || starts_with(all[i], "***END OF")) {
      end = i;
      break;
    }
  std::vector<TextDocument> docs(1);
  std::string para;
  auto flush = [&] {
    const std::string p = collapse_spaces(para);
    para.clear();
    if (p.empty()) return;
    if (is_chapter_heading(p)) {
      if (!docs.back().empty()) docs.emplace_back();
      return;
    }
    add_paragraph(docs.back(), p);
  };
  for (size_t i = begin; i < end; ++i) {
    if (trim(all[i]).empty()) {
      flush();
      continue;
    }
    para.append(all[i]);
    para.push_back(' ');
  }
  flush();
  return docs;
}

std::vector<TextDocument> read_lines(const std::vector<std::string_view>& lines) {
  std::vector<TextDocument> docs;
  for (auto line : lines) {
    if (trim(line).empty()) continue;
    docs.emplace_back();
    add_paragraph(docs.back(), line);
  }
  return docs;
}

}  // namespace

CorpusFormat parse_corpus_format(const std::string& name) {
  for (CorpusFormat f : {CorpusFormat::kAuto, CorpusFormat::kAlbert, CorpusFormat::kWikiText,
                         CorpusFormat::kGutenberg, CorpusFormat::kLines})
    if (name == corpus_format_name(f)) return f;
  throw Error("unknown corpus format '" + name + "' (expected one of: auto, albert, wikitext, gutenberg, lines)");
}

const char* corpus_format_name(CorpusFormat format) {
  switch (format) {
    case CorpusFormat::kAuto: return "auto";
    case CorpusFormat::kAlbert: return "albert";
    case CorpusFormat::kWikiText: return "wikitext";
    case CorpusFormat::kGutenberg: return "gutenberg";
    case CorpusFormat::kLines: return "lines";
  }
  return "?";
}

std::string normalize_text(std::string_view text) {
  if (starts_with(text, "\xEF\xBB\xBF")) text.remove_prefix(3);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

CorpusFormat detect_corpus_format(std::string_view text) {
  const auto lines = split_lines(text.substr(0, 64 * 1024));
  int64_t non_empty = 0, leading_space = 0, sentence_end = 0, blank = 0, bytes = 0;
  bool title = false;
  for (auto line : lines) {
    if (starts_with(line, "*** START OF") || starts_with(line, "***START OF")) return CorpusFormat::kGutenberg;
    const std::string_view t = trim(line);
    if (t.empty()) {
      ++blank;
      continue;
    }
    ++non_empty;
    bytes += static_cast<int64_t>(t.size());
    leading_space += line[0] == ' ';
    title |= is_wikitext_title(line);
    size_t e = t.size();
    while (e > 0) {  // step over closing quotes/brackets
      const size_t n = e >= 3 ? closing_at(t, e - 3) : 0;
      if (n == 3) e -= 3;
      else if (closing_at(t, e - 1) == 1) e -= 1;
      else break;
    }
    sentence_end += e > 0 && (t[e - 1] == '.' || t[e - 1] == '!' || t[e - 1] == '?');
  }
  if (non_empty == 0) return CorpusFormat::kAlbert;
  if (title && leading_space * 10 >= non_empty * 9) return CorpusFormat::kWikiText;
  if (bytes / non_empty >= 250) return CorpusFormat::kLines;
  if (blank > 0 && sentence_end * 10 >= non_empty * 6) return CorpusFormat::kAlbert;
  return CorpusFormat::kGutenberg;
}

std::vector<TextDocument> read_corpus_text(std::string_view raw, CorpusFormat format, CorpusFormat* used) {
  const std::string text = normalize_text(raw);
  if (format == CorpusFormat::kAuto) format = detect_corpus_format(text);
  if (used) *used = format;
  const auto lines = split_lines(text);
  std::vector<TextDocument> docs;
  switch (format) {
    case CorpusFormat::kAlbert: docs = read_albert(lines); break;
    case CorpusFormat::kWikiText: docs = read_wikitext(lines); break;
    case CorpusFormat::kGutenberg: docs = read_gutenberg(lines); break;
    case CorpusFormat::kLines: docs = read_lines(lines); break;
    case CorpusFormat::kAuto: break;
  }
  docs.erase(std::remove_if(docs.begin(), docs.end(), [](const TextDocument& d) { return d.empty(); }), docs.end());
  return docs;
}

std::vector<std::string> split_sentences(std::string_view paragraph) {
  const std::string p = collapse_spaces(paragraph);
  std::vector<std::string> out;
  size_t start = 0;
  const size_t n = p.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = p[i];
    if (c != '.' && c != '!' && c != '?') continue;
    size_t j = i;
    while (j + 1 < n && (p[j + 1] == '.' || p[j + 1] == '!' || p[j + 1] == '?')) ++j;  // "?!", "..."
    size_t k = j + 1;
    for (size_t m; k < n && (m = closing_at(p, k)) > 0;) k += m;
    if (k >= n || p[k] != ' ' || k + 1 >= n || !sentence_start_at(p, k + 1)) {
      i = j;
      continue;
    }
    if (c == '.' && j == i) {
      const std::string_view w = word_before(p, i);
      const bool initial = w.size() == 1 && std::isalpha(static_cast<unsigned char>(w[0]));
      if (initial || abbreviations().count(w)) {
        i = j;
        continue;
      }
    }
    out.push_back(p.substr(start, k - start));
    start = k + 1;
    i = k;
  }
  if (start < n) out.push_back(p.substr(start));
  return out;
}

std::string wikitext_detokenize(std::string_view line) {
  std::string s = collapse_spaces(line);
  auto replace_all = [&](std::string_view from, std::string_view to) {
    std::string r;
    r.reserve(s.size());
    size_t pos = 0;
    for (size_t f; (f = s.find(from, pos)) != std::string::npos; pos = f + from.size()) {
      r.append(s, pos, f - pos);
      r.append(to);
    }
    r.append(s, pos, std::string::npos);
    s.swap(r);
  };
  replace_all(" @-@ ", "-");
  replace_all(" @,@ ", ",");
  replace_all(" @.@ ", ".");
  for (std::string_view p : {" ,", " .", " ;", " :", " !", " ?", " )", " ]", " 's", " n't"})
    replace_all(p, p.substr(1));
  replace_all("( ", "(");
  replace_all("[ ", "[");
  return s;
}

}  // namespace tisa::prep
