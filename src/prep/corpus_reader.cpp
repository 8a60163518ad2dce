// Corpus readers and the sentence splitter (rules in corpus_reader.h).
#include "prep/corpus_reader.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <nlohmann/json.hpp>

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
  // Most text needs nothing: no leading/trailing space, no run, no tab or line end.
  bool clean = !s.empty() && s.front() != ' ' && s.back() != ' ';
  for (size_t i = 0; clean && i < s.size(); ++i) {
    const char c = s[i];
    clean = c == ' ' ? s[i + 1] != ' ' : !is_space(c);
  }
  if (clean) return std::string(s);
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

// ------------------------------------------------------------------------------ parsers
// One parser per format, fed line by line; documents go to the sink as soon as they end.
class Parser {
 public:
  Parser(ReadReport& report, const DocumentSink& sink) : report_(report), sink_(sink) {}
  virtual ~Parser() = default;
  virtual void line(std::string_view line, int64_t number) = 0;
  virtual void finish() { end_document(); }

 protected:
  ReadReport& report_;
  const DocumentSink& sink_;
  TextDocument doc_;
  int64_t doc_bytes_ = 0;

  // Counts a line's text; returns it trimmed.
  std::string_view count(std::string_view line) {
    const std::string_view t = trim(line);
    report_.text_bytes += static_cast<int64_t>(t.size());
    return t;
  }
  void keep(std::string_view t) { report_.kept_bytes += static_cast<int64_t>(t.size()); }
  void drop(const char* reason, std::string_view t) {
    if (!t.empty()) report_.dropped[reason] += static_cast<int64_t>(t.size());
  }
  void add_sentence(std::string sentence) {
    doc_bytes_ += static_cast<int64_t>(sentence.size());
    doc_.push_back(std::move(sentence));
    if (doc_bytes_ > kMaxDocumentBytes) {
      ++report_.documents_cut;
      end_document();
    }
  }
  void add_paragraph(std::string_view para) {
    for (auto& s : split_sentences(para)) add_sentence(std::move(s));
  }
  void end_document() {
    if (doc_.empty()) return;
    ++report_.documents;
    report_.sentences += static_cast<int64_t>(doc_.size());
    TextDocument out;
    out.swap(doc_);
    doc_bytes_ = 0;
    sink_(std::move(out));
  }
};

class AlbertParser : public Parser {
 public:
  using Parser::Parser;
  void line(std::string_view line, int64_t) override {
    const std::string_view t = count(line);
    if (t.empty()) return end_document();
    keep(t);
    add_sentence(collapse_spaces(t));
  }
};

class WikiTextParser : public Parser {
 public:
  using Parser::Parser;
  void line(std::string_view line, int64_t) override {
    const std::string_view t = count(line);
    if (t.empty()) return;
    if (is_wikitext_heading(line)) return drop("wikitext section headings", t);
    if (is_wikitext_title(line)) {
      end_document();
      return drop("wikitext article titles", t);
    }
    keep(t);
    add_paragraph(wikitext_detokenize(line));
  }
};

bool is_start_marker(std::string_view l) { return starts_with(l, "*** START OF") || starts_with(l, "***START OF"); }
bool is_end_marker(std::string_view l) { return starts_with(l, "*** END OF") || starts_with(l, "***END OF"); }

// Project Gutenberg's licence, after "*** END OF", ends with this paragraph (or, in older files,
// with a "*** END: FULL LICENSE" line); what follows it is the next book's header or other text.
bool ends_licence(std::string_view l) {
  return l.find("hear about new eBooks") != std::string_view::npos || starts_with(l, "*** END: FULL LICENSE") ||
         starts_with(l, "*END*THE SMALL PRINT");
}

class GutenbergParser : public Parser {
 public:
  using Parser::Parser;
  void line(std::string_view line, int64_t) override {
    switch (state_) {
      case State::kPreamble: return preamble_line(line);
      case State::kBody: return body_line(line);
      case State::kLicence: return licence_line(line);
    }
  }
  void finish() override {
    if (state_ == State::kPreamble) keep_held();
    if (state_ == State::kLicence) drop_held();  // a licence at the end of the file
    flush_paragraph();
    end_document();
  }

 private:
  // kPreamble: before a START marker, lines held until one comes (they were a header) or more
  // than a header's size has passed (there is none: they are text). kLicence: after an END
  // marker, held until the licence's last paragraph or a START (dropped), or until more than a
  // licence's size has passed without either (kept: it was text, not a licence).
  enum class State { kPreamble, kBody, kLicence };
  static constexpr const char* kBoilerplate = kBoilerplateReason;
  State state_ = State::kPreamble;
  std::vector<std::string> held_;
  int64_t held_bytes_ = 0;
  std::string para_;
  int64_t para_text_ = 0;  // text bytes of the paragraph's lines (before joining)

  void hold(std::string_view line) {
    held_.emplace_back(line);
    held_bytes_ += static_cast<int64_t>(trim(line).size());
  }
  void drop_held() {
    report_.text_bytes += held_bytes_;
    if (held_bytes_ > 0) report_.dropped[kBoilerplate] += held_bytes_;
    held_.clear();
    held_bytes_ = 0;
  }
  void keep_held() {
    state_ = State::kBody;
    std::vector<std::string> lines;
    lines.swap(held_);
    held_bytes_ = 0;
    for (const auto& l : lines) body_line(l);
  }
  void preamble_line(std::string_view line) {
    if (is_start_marker(line)) {
      drop_held();
      drop(kBoilerplate, count(line));
      state_ = State::kBody;
      return;
    }
    hold(line);
    if (held_bytes_ > kMaxBoilerplateBytes || is_end_marker(line)) keep_held();
  }
  void licence_line(std::string_view line) {
    if (is_start_marker(line) || ends_licence(line)) {
      drop_held();
      drop(kBoilerplate, count(line));
      state_ = is_start_marker(line) ? State::kBody : State::kPreamble;
      return;
    }
    hold(line);
    if (held_bytes_ > kMaxBoilerplateBytes) keep_held();
  }
  void body_line(std::string_view line) {
    if (is_end_marker(line) || is_start_marker(line)) {
      drop(kBoilerplate, count(line));
      flush_paragraph();
      end_document();  // every book is its own document
      if (is_end_marker(line)) state_ = State::kLicence;
      return;
    }
    const std::string_view t = count(line);
    if (t.empty()) return flush_paragraph();
    para_.append(line);
    para_.push_back(' ');
    para_text_ += static_cast<int64_t>(t.size());
    if (static_cast<int64_t>(para_.size()) > kMaxDocumentBytes) flush_paragraph();  // a file without blank lines
  }
  void flush_paragraph() {
    const std::string p = collapse_spaces(para_);
    const int64_t text = para_text_;
    para_.clear();
    para_text_ = 0;
    if (p.empty()) return;
    if (is_chapter_heading(p)) {
      end_document();
      report_.dropped["chapter headings"] += text;
      return;
    }
    report_.kept_bytes += text;
    add_paragraph(p);
  }
};

class LinesParser : public Parser {
 public:
  using Parser::Parser;
  void line(std::string_view line, int64_t) override {
    const std::string_view t = count(line);
    if (t.empty()) return;
    keep(t);
    add_paragraph(t);
    end_document();
  }
};

class JsonlParser : public Parser {
 public:
  JsonlParser(ReadReport& report, const DocumentSink& sink, const ReaderOptions& options)
      : Parser(report, sink), field_(options.text_field) {}
  void line(std::string_view line, int64_t number) override {
    if (trim(line).empty()) return;
    const std::string where = report_.path + ":" + std::to_string(number) + ": ";
    nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw Error(where + "not a JSON object (--format jsonl expects one object per line)");
    const auto it = j.find(field_);
    if (it == j.end()) {
      std::string keys;
      for (const auto& [k, v] : j.items()) keys += (keys.empty() ? "" : ", ") + k;
      throw Error(where + "the object has no \"" + field_ + "\" field (it has: " + keys +
                  "); choose the field with --text-field");
    }
    if (!it->is_string()) throw Error(where + "\"" + field_ + "\" is " + it->type_name() + ", expected a string");
    const std::string& text = it->get_ref<const std::string&>();
    size_t start = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string::npos) nl = text.size();
      const std::string_view t = count(std::string_view(text).substr(start, nl - start));
      if (!t.empty()) {
        keep(t);
        add_paragraph(t);
      }
      start = nl + 1;
    }
    end_document();
  }

 private:
  std::string field_;
};

std::unique_ptr<Parser> make_parser(CorpusFormat format, ReadReport& report, const DocumentSink& sink,
                                    const ReaderOptions& options) {
  switch (format) {
    case CorpusFormat::kAlbert: return std::make_unique<AlbertParser>(report, sink);
    case CorpusFormat::kWikiText: return std::make_unique<WikiTextParser>(report, sink);
    case CorpusFormat::kGutenberg: return std::make_unique<GutenbergParser>(report, sink);
    case CorpusFormat::kLines: return std::make_unique<LinesParser>(report, sink);
    case CorpusFormat::kJsonl: return std::make_unique<JsonlParser>(report, sink, options);
    case CorpusFormat::kAuto: break;
  }
  throw Error("internal: no parser for format auto");
}

// Feeds lines from `next` to the format's parser; kAuto first holds 64 KiB of lines to decide.
template <typename NextLine>
void parse_lines(CorpusFormat format, ReadReport& report, const DocumentSink& sink, const ReaderOptions& options,
                 NextLine&& next) {
  std::string line;
  int64_t number = 0;
  std::vector<std::string> head;
  if (format == CorpusFormat::kAuto) {
    std::string sample;
    while (sample.size() < 64 * 1024 && next(line)) {
      sample.append(line).push_back('\n');
      head.push_back(line);
    }
    format = detect_corpus_format(sample);
  }
  report.format = format;
  const auto parser = make_parser(format, report, sink, options);
  for (const auto& l : head) parser->line(l, ++number);
  while (next(line)) parser->line(line, ++number);
  parser->finish();
}

}  // namespace

CorpusFormat parse_corpus_format(const std::string& name) {
  for (CorpusFormat f : {CorpusFormat::kAuto, CorpusFormat::kAlbert, CorpusFormat::kWikiText,
                         CorpusFormat::kGutenberg, CorpusFormat::kLines, CorpusFormat::kJsonl})
    if (name == corpus_format_name(f)) return f;
  throw Error("unknown corpus format '" + name + "' (expected one of: auto, albert, wikitext, gutenberg, lines, jsonl)");
}

const char* corpus_format_name(CorpusFormat format) {
  switch (format) {
    case CorpusFormat::kAuto: return "auto";
    case CorpusFormat::kAlbert: return "albert";
    case CorpusFormat::kWikiText: return "wikitext";
    case CorpusFormat::kGutenberg: return "gutenberg";
    case CorpusFormat::kLines: return "lines";
    case CorpusFormat::kJsonl: return "jsonl";
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
  for (auto line : lines) {
    const std::string_view t = trim(line);
    if (t.empty()) continue;
    if (t.front() == '{' && t.back() == '}' && nlohmann::json::accept(t)) return CorpusFormat::kJsonl;
    break;
  }
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

int64_t ReadReport::dropped_beyond_boilerplate() const {
  int64_t n = 0;
  for (const auto& [reason, bytes] : dropped)
    if (reason != kBoilerplateReason) n += bytes;
  return n;
}

ReadReport read_corpus_file(const std::string& path, CorpusFormat format, const ReaderOptions& options,
                            const DocumentSink& sink) {
  ReadReport report;
  report.path = path;
  LineReader reader(path);
  report.compression = reader.compression();
  int64_t lines = 0;
  parse_lines(format, report, sink, options, [&](std::string& line) {
    if (options.progress && (++lines & 4095) == 0) options.progress(reader.file_offset());
    return reader.next(line);
  });
  report.bytes = reader.bytes_read();
  return report;
}

std::vector<TextDocument> read_corpus_text(std::string_view raw, CorpusFormat format, CorpusFormat* used,
                                           ReadReport* report_out, const ReaderOptions& options) {
  const std::string text = normalize_text(raw);
  const auto lines = split_lines(text);
  std::vector<TextDocument> docs;
  ReadReport report;
  report.bytes = static_cast<int64_t>(raw.size());
  size_t i = 0;
  parse_lines(format, report, [&](TextDocument&& d) { docs.push_back(std::move(d)); }, options,
              [&](std::string& line) {
                if (i == lines.size()) return false;
                line.assign(lines[i++]);
                return true;
              });
  if (used) *used = report.format;
  if (report_out) *report_out = std::move(report);
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
