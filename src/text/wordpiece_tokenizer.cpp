// WordPiece (BERT) tokenizer; see wordpiece_tokenizer.h and SPEC §6.
#include "text/wordpiece_tokenizer.h"

#include <algorithm>
#include <map>

#include "common/error.h"
#include "common/fs.h"
#include "text/unicode.h"

namespace tisa::text {
namespace {

enum AsciiClass : uint8_t { kOther = 0, kSpace = 1, kDrop = 2, kPunct = 3 };

struct AsciiTables {
  std::array<uint8_t, 128> cls{};
  std::array<char, 128> lower{};
  AsciiTables() {
    for (int c = 0; c < 128; ++c) {
      lower[c] = char(c >= 'A' && c <= 'Z' ? c + 32 : c);
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        cls[c] = kSpace;
      else if (c < 32 || c == 127)  // Cc other than \t\n\r (U+0000 included) is removed
        cls[c] = kDrop;
      else if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
        cls[c] = kPunct;
      else
        cls[c] = kOther;
    }
  }
};
const AsciiTables kAscii;

bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_punctuation(char32_t cp) {
  if (cp < 128) return kAscii.cls[cp] == kPunct;
  return unicode::is_category_p(cp);
}

constexpr const char* kSpecialStrings[] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};

}  // namespace

// ---- trie ----

void WordPieceTokenizer::Trie::build(const std::vector<std::pair<std::string, int32_t>>& entries) {
  // Temporary pointer trie with ordered children, flattened breadth-first.
  struct Tmp {
    int32_t id = -1;
    std::map<uint8_t, uint32_t> kids;
  };
  std::vector<Tmp> tmp(1);
  for (const auto& [s, id] : entries) {
    uint32_t node = 0;
    for (unsigned char b : s) {
      auto it = tmp[node].kids.find(b);
      if (it == tmp[node].kids.end()) {
        tmp.emplace_back();
        const uint32_t fresh = uint32_t(tmp.size() - 1);
        tmp[node].kids.emplace(b, fresh);
        node = fresh;
      } else {
        node = it->second;
      }
    }
    tmp[node].id = id;  // a later duplicate wins
  }
  nodes.assign(tmp.size(), Node{});
  labels.clear();
  targets.clear();
  for (size_t n = 0; n < tmp.size(); ++n) {
    nodes[n].id = tmp[n].id;
    nodes[n].first = uint32_t(labels.size());
    nodes[n].count = uint32_t(tmp[n].kids.size());
    for (const auto& [b, t] : tmp[n].kids) {
      labels.push_back(b);
      targets.push_back(t);
    }
  }
  root_children.fill(0);
  for (const auto& [b, t] : tmp[0].kids) root_children[b] = t;
}

inline uint32_t WordPieceTokenizer::Trie::child(uint32_t node, uint8_t byte) const {
  if (node == 0) return root_children[byte];
  const Node& n = nodes[node];
  const uint8_t* l = labels.data() + n.first;
  if (n.count <= 8) {
    for (uint32_t k = 0; k < n.count; ++k)
      if (l[k] == byte) return targets[n.first + k];
    return 0;
  }
  const uint8_t* end = l + n.count;
  const uint8_t* it = std::lower_bound(l, end, byte);
  return (it != end && *it == byte) ? targets[n.first + uint32_t(it - l)] : 0;
}

// ---- construction ----

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options,
                                       std::string identity)
    : vocab_(std::move(vocab)), options_(options), identity_(std::move(identity)) {
  std::vector<std::pair<std::string, int32_t>> initial, continuation;
  initial.reserve(vocab_.size());
  word_start_.resize(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) {
    const std::string& t = vocab_[i];
    token_ids_[t] = int32_t(i);
    initial.emplace_back(t, int32_t(i));
    const bool cont = t.size() > 2 && t[0] == '#' && t[1] == '#';
    word_start_[i] = !cont;
    if (cont) continuation.emplace_back(t.substr(2), int32_t(i));
  }
  initial_.build(initial);
  continuation_.build(continuation);
  special_.pad = token_to_id("[PAD]");
  special_.unk = token_to_id("[UNK]");
  special_.cls = token_to_id("[CLS]");
  special_.sep = token_to_id("[SEP]");
  special_.mask = token_to_id("[MASK]");
  if (special_.unk < 0) throw Error("WordPiece vocabulary " + identity_ + " has no [UNK] token");
  for (int c = 0; c < 128; ++c) ascii_single_[c] = token_to_id(std::string(1, char(c)));
  for (const char* s : kSpecialStrings) never_split_.emplace_back(s, token_to_id(s));
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::from_file(const std::string& path,
                                                                  WordPieceOptions options) {
  const std::string data = fs::read_file(path);
  if (data.empty()) throw Error("WordPiece vocabulary " + path + " is empty");
  if (data.find('\0') != std::string::npos)
    throw Error("WordPiece vocabulary " + path + " is corrupt: it contains NUL bytes (expected one token per line)");
  if (unicode::decode(data).find(unicode::kReplacement) != std::u32string::npos &&
      data.find("\xEF\xBF\xBD") == std::string::npos)
    throw Error("WordPiece vocabulary " + path + " is corrupt: not valid UTF-8 text");
  std::vector<std::string> vocab;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t end = data.find('\n', pos);
    if (end == std::string::npos) end = data.size();
    size_t stop = end;
    if (stop > pos && data[stop - 1] == '\r') --stop;
    vocab.emplace_back(data.substr(pos, stop - pos));
    pos = end + 1;
  }
  const std::string identity = "wordpiece-" + fs::to_hex(fs::fnv1a64(data)) + (options.lowercase ? "-lc" : "-cased") +
                               (options.lowercase && options.keep_accents ? "-accents" : "");
  try {
    return std::make_unique<WordPieceTokenizer>(std::move(vocab), options, identity);
  } catch (const Error& e) {
    throw Error("WordPiece vocabulary " + path + " is not usable: " + e.what());
  }
}

int32_t WordPieceTokenizer::token_to_id(std::string_view token) const {
  auto it = token_ids_.find(std::string(token));
  return it == token_ids_.end() ? -1 : it->second;
}

// ---- encoding ----

void WordPieceTokenizer::wordpiece(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (int(unicode::count_code_points(word)) > options_.max_input_chars_per_word) {
    out.push_back(special_.unk);
    return;
  }
  const size_t mark = out.size();
  const auto* w = reinterpret_cast<const uint8_t*>(word.data());
  const size_t n = word.size();
  size_t start = 0;
  while (start < n) {
    const Trie& trie = start == 0 ? initial_ : continuation_;
    uint32_t node = 0;
    int32_t best = -1;
    size_t best_end = 0;
    for (size_t k = start; k < n; ++k) {
      node = trie.child(node, w[k]);
      if (node == 0) break;
      const int32_t id = trie.nodes[node].id;
      if (id >= 0) {
        best = id;
        best_end = k + 1;
      }
    }
    if (best < 0) {  // no piece matches: the whole word is unknown
      out.resize(mark);
      out.push_back(special_.unk);
      return;
    }
    out.push_back(best);
    start = best_end;
  }
}

void WordPieceTokenizer::process_general_token(std::string_view token, std::vector<int32_t>& out) const {
  std::u32string t = unicode::nfc(unicode::decode(token));
  if (options_.lowercase) {
    t = unicode::python_lower(t);
    if (!options_.keep_accents) {
      std::u32string d = unicode::nfd(t);
      t.clear();
      for (char32_t c : d)
        if (!unicode::is_category_mn(c)) t.push_back(c);
    }
  }
  std::string word;
  std::string single;
  for (char32_t c : t) {
    if (is_punctuation(c)) {
      wordpiece(word, out);
      word.clear();
      single.clear();
      unicode::append_utf8(single, c);
      wordpiece(single, out);
    } else {
      unicode::append_utf8(word, c);
    }
  }
  wordpiece(word, out);
}

void WordPieceTokenizer::process_token(std::string_view token, bool ascii, std::vector<int32_t>& out) const {
  if (token.size() >= 5 && token.size() <= 6 && token[0] == '[') {
    for (const auto& [s, id] : never_split_) {
      if (token == s) {  // kept whole, not lowercased, not split (never_split)
        wordpiece(token, out);
        return;
      }
    }
  }
  if (!ascii) {
    process_general_token(token, out);
    return;
  }
  // ASCII fast path: lowercase by table, split on ASCII punctuation, no decoding.
  char buf[256];
  size_t len = 0;
  const bool lower = options_.lowercase;
  auto flush = [&]() {
    if (len) wordpiece(std::string_view(buf, len), out);
    len = 0;
  };
  for (size_t i = 0; i < token.size(); ++i) {
    const auto c = uint8_t(token[i]);
    if (kAscii.cls[c] == kPunct) {
      flush();
      const int32_t id = ascii_single_[c];
      out.push_back(id >= 0 ? id : special_.unk);
      continue;
    }
    if (len == sizeof(buf)) {
      // A word longer than the buffer (> 256 chars) is [UNK] anyway; skip to its end.
      while (i + 1 < token.size() && kAscii.cls[uint8_t(token[i + 1])] != kPunct) ++i;
      len = 0;
      out.push_back(special_.unk);
      continue;
    }
    buf[len++] = lower ? kAscii.lower[c] : char(c);
  }
  flush();
}

void WordPieceTokenizer::encode_into(std::string_view text, std::vector<int32_t>& out) const {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  constexpr size_t kNone = size_t(-1);
  size_t start = kNone;
  bool use_buf = false, ascii = true;
  std::string buf;  // the cleaned token, only when a removed character sits inside it
  auto flush = [&](size_t end) {
    if (start != kNone) {
      const std::string_view tok = use_buf ? std::string_view(buf) : text.substr(start, end - start);
      if (!tok.empty()) process_token(tok, ascii, out);
    }
    start = kNone;
    use_buf = false;
    ascii = true;
  };
  auto drop = [&](size_t i) {
    if (start != kNone && !use_buf) {
      buf.assign(text.data() + start, i - start);
      use_buf = true;
    }
  };
  size_t i = 0;
  while (i < n) {
    const uint8_t c = p[i];
    if (c < 0x80) {
      const uint8_t k = kAscii.cls[c];
      if (k == kSpace) {
        flush(i);
      } else if (k == kDrop) {
        drop(i);
      } else {
        if (start == kNone) start = i;
        if (use_buf) buf.push_back(char(c));
      }
      ++i;
      continue;
    }
    size_t len = 0;
    const char32_t cp = unicode::decode_one(text, i, len);
    if (cp == unicode::kReplacement || unicode::is_category_c(cp)) {
      drop(i);  // U+FFFD (and invalid bytes, read as U+FFFD) and C* are removed
    } else if (unicode::is_category_zs(cp) || cp == 0x2028 || cp == 0x2029) {
      flush(i);  // Zs become spaces; Zl/Zp split in str.split()
    } else if (is_chinese_char(cp)) {
      flush(i);
      process_token(text.substr(i, len), false, out);
    } else {
      if (start == kNone) {
        start = i;
        use_buf = false;
      }
      ascii = false;
      if (use_buf) buf.append(text.data() + i, len);
    }
    i += len;
  }
  flush(n);
}

std::vector<int32_t> WordPieceTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 4 + 4);
  encode_into(text, out);
  return out;
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> pieces;
  for (int32_t id : encode(text)) pieces.push_back(vocab_[size_t(id)]);
  return pieces;
}

std::string WordPieceTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  for (int32_t id : ids) {
    const std::string piece = id_to_piece(id);
    if (piece.size() > 2 && piece[0] == '#' && piece[1] == '#' && !out.empty()) {
      out.append(piece, 2, std::string::npos);
    } else {
      if (!out.empty()) out.push_back(' ');
      out += piece;
    }
  }
  return out;
}

bool WordPieceTokenizer::is_word_start(int32_t id) const {
  return id < 0 || size_t(id) >= word_start_.size() ? true : word_start_[size_t(id)] != 0;
}

std::string WordPieceTokenizer::id_to_piece(int32_t id) const {
  if (id < 0 || size_t(id) >= vocab_.size())
    throw Error("WordPiece id " + std::to_string(id) + " is out of range [0, " + std::to_string(vocab_.size()) + ")");
  return vocab_[size_t(id)];
}

}  // namespace tisa::text
