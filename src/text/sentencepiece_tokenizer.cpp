// SentencePiece (ALBERT) tokenizer; see sentencepiece_tokenizer.h and SPEC §6.
#include "text/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include "common/error.h"
#include "common/fs.h"
#include "text/unicode.h"

namespace tisa::text {
namespace {

constexpr std::string_view kMeta = "\xE2\x96\x81";  // U+2581, SentencePiece's word marker

bool starts_with_meta(std::string_view s) { return s.substr(0, 3) == kMeta; }

// " ".join(text.strip().split()) then ``/'' -> ", on code points.
std::u32string collapse_and_quote(const std::u32string& in) {
  std::u32string words;
  words.reserve(in.size());
  bool pending_space = false;
  for (char32_t c : in) {
    if (unicode::is_python_space(c)) {
      pending_space = !words.empty();
      continue;
    }
    if (pending_space) words.push_back(U' ');
    pending_space = false;
    words.push_back(c);
  }
  std::u32string out;
  out.reserve(words.size());
  for (size_t i = 0; i < words.size(); ++i) {  // .replace("``", '"')
    if (words[i] == U'`' && i + 1 < words.size() && words[i + 1] == U'`') {
      out.push_back(U'"');
      ++i;
    } else {
      out.push_back(words[i]);
    }
  }
  std::u32string out2;
  out2.reserve(out.size());
  for (size_t i = 0; i < out.size(); ++i) {  // .replace("''", '"')
    if (out[i] == U'\'' && i + 1 < out.size() && out[i + 1] == U'\'') {
      out2.push_back(U'"');
      ++i;
    } else {
      out2.push_back(out[i]);
    }
  }
  return out2;
}

}  // namespace

// ASCII fast path of albert_preprocess: NFKD and combining marks do not apply; the same
// whitespace collapse, quote replacement and lowercase on bytes.
static std::string albert_preprocess_ascii(std::string_view text, bool lowercase) {
  std::string words;
  words.reserve(text.size());
  bool pending_space = false;
  for (char ch : text) {
    const auto c = uint8_t(ch);
    if ((c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x20)) {
      pending_space = !words.empty();
      continue;
    }
    if (pending_space) words.push_back(' ');
    pending_space = false;
    words.push_back(lowercase && c >= 'A' && c <= 'Z' ? char(c + 32) : char(c));
  }
  for (const char q : {'`', '\''}) {
    if (words.find(std::string(2, q)) == std::string::npos) continue;
    std::string out;
    out.reserve(words.size());
    for (size_t i = 0; i < words.size(); ++i) {
      if (words[i] == q && i + 1 < words.size() && words[i + 1] == q) {
        out.push_back('"');
        ++i;
      } else {
        out.push_back(words[i]);
      }
    }
    words.swap(out);
  }
  return words;
}

std::string albert_preprocess(std::string_view text, const SentencePieceOptions& options) {
  if (unicode::is_ascii(text)) return albert_preprocess_ascii(text, options.lowercase);
  std::u32string t = collapse_and_quote(unicode::decode(text));
  if (!options.keep_accents) {
    std::u32string d = unicode::nfkd(t);
    t.clear();
    for (char32_t c : d)
      if (unicode::combining_class(c) == 0) t.push_back(c);
  }
  if (options.lowercase) t = unicode::python_lower(t);
  return unicode::encode(t);
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::from_file(const std::string& path,
                                                                          SentencePieceOptions options) {
  const std::string data = fs::read_file(path);
  if (data.empty()) throw Error("SentencePiece model " + path + " is empty");
  std::unique_ptr<SentencePieceTokenizer> tok(new SentencePieceTokenizer());
  tok->sp_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = tok->sp_->LoadFromSerializedProto(data);
  if (!status.ok() || tok->sp_->GetPieceSize() <= 0)
    throw Error("SentencePiece model " + path + " is corrupt or not a SentencePiece model: " + status.ToString());
  tok->options_ = options;
  tok->path_ = path;
  tok->identity_ = "sentencepiece-" + fs::to_hex(fs::fnv1a64(data)) + (options.lowercase ? "-lc" : "-cased") +
                   (options.keep_accents ? "-accents" : "");
  auto find = [&](const char* piece) {
    const int id = tok->sp_->PieceToId(piece);
    return tok->sp_->IdToPiece(id) == piece ? int32_t(id) : int32_t(-1);
  };
  tok->special_.pad = find("<pad>");
  tok->special_.unk = tok->sp_->unk_id();
  tok->special_.cls = find("[CLS]");
  tok->special_.sep = find("[SEP]");
  tok->special_.mask = find("[MASK]");
  const int n = tok->sp_->GetPieceSize();
  tok->word_start_.resize(size_t(n));
  for (int i = 0; i < n; ++i) tok->word_start_[size_t(i)] = starts_with_meta(tok->sp_->IdToPiece(i));
  return tok;
}

std::vector<std::string> SentencePieceTokenizer::pieces_of(std::string_view text) const {
  const std::string pre = albert_preprocess(text, options_);
  std::vector<std::string> pieces;
  if (pre.empty()) return pieces;
  sp_->Encode(pre, &pieces).IgnoreError();
  std::vector<std::string> out;
  out.reserve(pieces.size() + 2);
  for (std::string& piece : pieces) {
    // Digit-comma rule of AlbertTokenizer._tokenize: a piece of more than one character ending in
    // "<digit>," is re-encoded without the comma (and without U+2581), the comma appended alone.
    if (piece.size() < 2 || piece.back() != ',') {
      out.push_back(std::move(piece));
      continue;
    }
    const std::u32string cps = unicode::decode(piece);
    if (cps.size() > 1 && cps.back() == U',' && unicode::is_python_digit(cps[cps.size() - 2])) {
      std::string body;
      for (size_t i = 0; i + 1 < cps.size(); ++i)
        if (cps[i] != 0x2581) unicode::append_utf8(body, cps[i]);
      std::vector<std::string> cur;
      sp_->Encode(body, &cur).IgnoreError();
      if (!starts_with_meta(piece) && !cur.empty() && starts_with_meta(cur[0])) {
        if (cur[0].size() == kMeta.size())
          cur.erase(cur.begin());
        else
          cur[0].erase(0, kMeta.size());
      }
      for (auto& c : cur) out.push_back(std::move(c));
      out.emplace_back(",");
    } else {
      out.push_back(std::move(piece));
    }
  }
  return out;
}

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
  const std::vector<std::string> pieces = pieces_of(text);
  std::vector<int32_t> ids;
  ids.reserve(pieces.size());
  for (const auto& p : pieces) ids.push_back(int32_t(sp_->PieceToId(p)));  // unknown -> unk id
  return ids;
}

std::vector<std::string> SentencePieceTokenizer::tokenize(std::string_view text) const { return pieces_of(text); }

std::string SentencePieceTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  std::vector<std::string> run;
  auto flush = [&]() {
    if (run.empty()) return;
    std::string text;
    sp_->Decode(run, &text).IgnoreError();
    if (!out.empty() && !text.empty()) out.push_back(' ');
    out += text;
    run.clear();
  };
  for (int32_t id : ids) {
    if (id == special_.pad) continue;
    const std::string piece = id_to_piece(id);
    if (sp_->IsControl(id)) {
      flush();
      if (!out.empty()) out.push_back(' ');
      out += piece;
    } else {
      run.push_back(piece);
    }
  }
  flush();
  return out;
}

bool SentencePieceTokenizer::is_word_start(int32_t id) const {
  return id < 0 || size_t(id) >= word_start_.size() ? true : word_start_[size_t(id)] != 0;
}

std::string SentencePieceTokenizer::id_to_piece(int32_t id) const {
  if (id < 0 || id >= sp_->GetPieceSize())
    throw Error("SentencePiece id " + std::to_string(id) + " is out of range [0, " +
                std::to_string(sp_->GetPieceSize()) + ") of " + path_);
  return sp_->IdToPiece(id);
}

int64_t SentencePieceTokenizer::vocab_size() const { return sp_->GetPieceSize(); }

int32_t SentencePieceTokenizer::piece_to_id(std::string_view piece) const {
  return int32_t(sp_->PieceToId(std::string(piece)));
}

}  // namespace tisa::text
