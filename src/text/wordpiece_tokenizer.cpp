// WordPiece (BERT) tokenizer; see wordpiece_tokenizer.h and SPEC §6.
#include "text/wordpiece_tokenizer.h"

#include <algorithm>
#include <map>

#include "common/error.h"
#include "common/fs.h"
#include "text/basic_tokenizer.h"
#include "text/unicode.h"

namespace tisa::text {

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

void WordPieceTokenizer::encode_into(std::string_view text, std::vector<int32_t>& out) const {
  detail::BasicOptions o;
  o.lowercase = options_.lowercase;
  o.strip_accents = options_.lowercase && !options_.keep_accents;
  detail::basic_tokenize(text, o, [&](std::string_view word) { wordpiece(word, out); });
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
