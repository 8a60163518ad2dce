// Tokenizer training (SPEC §6); see tokenizer_trainer.h for the algorithms.
#include "text/tokenizer_trainer.h"

#include <sentencepiece_trainer.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <queue>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"
#include "common/fs.h"
#include "text/basic_tokenizer.h"
#include "text/batch_encode.h"
#include "text/hf_tokenizer_files.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/tokenizer.h"
#include "text/unicode.h"

namespace tisa::text {

std::vector<std::string> read_text_lines(const std::vector<std::string>& files) {
  std::vector<std::string> lines;
  for (const std::string& file : files) {
    if (!std::filesystem::is_regular_file(file)) throw Error("training input " + file + " does not exist");
    const std::string data = fs::read_utf8_text_file(file);
    size_t pos = data.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    while (pos < data.size()) {
      size_t end = data.find('\n', pos);
      if (end == std::string::npos) end = data.size();
      size_t stop = end;
      if (stop > pos && data[stop - 1] == '\r') --stop;
      lines.emplace_back(data, pos, stop - pos);
      pos = end + 1;
    }
  }
  return lines;
}

namespace {

constexpr const char* kSpecials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

// Runs f(begin, end, thread_index) over [0, n) split into `threads` contiguous ranges.
template <class F>
void parallel_ranges(size_t n, int threads, F f) {
  const size_t t = std::max<size_t>(1, std::min<size_t>(size_t(threads), n / 256 + 1));
  std::vector<std::thread> pool;
  for (size_t k = 0; k < t; ++k) pool.emplace_back([&, k] { f(n * k / t, n * (k + 1) / t, k); });
  for (auto& th : pool) th.join();
}

class LinesIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LinesIterator(const std::vector<std::string>& lines) : lines_(lines) {}
  bool done() const override { return i_ >= lines_.size(); }
  void Next() override { ++i_; }
  const std::string& value() const override { return lines_[i_]; }
  sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }

 private:
  const std::vector<std::string>& lines_;
  size_t i_ = 0;
};

void write_json(const std::string& dir, const std::string& type, const std::string& file,
                const TokenizerTrainOptions& o) {
  auto tok = load_tokenizer((std::filesystem::path(dir) / file).string(),
                            TokenizerOptions{o.lowercase, o.keep_accents});
  const SpecialIds& s = tok->special_ids();
  nlohmann::json j;
  j["type"] = type;
  j["file"] = file;
  j["lowercase"] = o.lowercase;
  j["keep_accents"] = o.keep_accents;
  j["vocab_size"] = tok->vocab_size();
  j["special_ids"] = {{"pad", s.pad}, {"unk", s.unk}, {"cls", s.cls}, {"sep", s.sep}, {"mask", s.mask}};
  j["trained_on"] = o.inputs;
  fs::write_file_atomic((std::filesystem::path(dir) / kTokenizerJson).string(), j.dump(2) + "\n");
  write_hf_tokenizer_files(dir, *tok, HfTokenizerSettings{type, o.lowercase, o.keep_accents});
}

std::string train_sentencepiece(const std::vector<std::string>& raw, const TokenizerTrainOptions& o) {
  SentencePieceOptions so;
  so.lowercase = o.lowercase;
  so.keep_accents = o.keep_accents;
  // The same normalisation as encoding (AlbertTokenizer.preprocess_text), in parallel.
  std::vector<std::string> lines(raw.size());
  parallel_ranges(raw.size(), resolve_threads(o.threads), [&](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; ++i) lines[i] = albert_preprocess(raw[i], so);
  });
  lines.erase(std::remove_if(lines.begin(), lines.end(), [](const std::string& l) { return l.empty(); }), lines.end());
  if (lines.empty()) throw Error("tokenizer training: the input files hold no text");
  const std::string prefix = (std::filesystem::path(o.output_dir) / "spiece").string();
  const std::unordered_map<std::string, std::string> args = {
      {"model_prefix", prefix},
      {"model_type", "unigram"},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"pad_id", "0"},
      {"unk_id", "1"},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      {"pad_piece", "<pad>"},
      {"unk_piece", "<unk>"},
      {"control_symbols", "[CLS],[SEP],[MASK]"},
      {"character_coverage", "0.99995"},
      {"input_sentence_size", std::to_string(o.max_sentences)},
      {"shuffle_input_sentence", "true"},
      {"max_sentence_length", "16384"},
      {"num_threads", std::to_string(resolve_threads(o.threads))},
      {"minloglevel", "1"},
  };
  LinesIterator it(lines);
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &it);
  if (!status.ok())
    throw Error("SentencePiece training failed (vocab size " + std::to_string(o.vocab_size) + "): " + status.ToString());
  std::filesystem::remove(prefix + ".vocab");
  write_json(o.output_dir, "sentencepiece", "spiece.model", o);
  return (std::filesystem::path(o.output_dir) / kTokenizerJson).string();
}

struct PairHeapItem {
  int64_t count;
  uint64_t pair;
  bool operator<(const PairHeapItem& other) const {  // max-heap: larger count, then smaller pair
    if (count != other.count) return count < other.count;
    return pair > other.pair;
  }
};

using WordCounts = std::vector<std::pair<std::string, int64_t>>;

// 1. Word counts of the basic-tokenised lines (specials like [CLS] left out), one map per
// thread, merged; sorted by word so that everything after is independent of the thread count.
WordCounts count_words(const std::vector<std::string>& lines, const TokenizerTrainOptions& o) {
  detail::BasicOptions bo;
  bo.lowercase = o.lowercase;
  bo.strip_accents = o.lowercase && !o.keep_accents;
  const int threads = resolve_threads(o.threads);
  std::vector<std::unordered_map<std::string, int64_t>> local(size_t(std::max(1, threads)));
  parallel_ranges(lines.size(), threads, [&](size_t b, size_t e, size_t k) {
    auto& m = local[k];
    for (size_t i = b; i < e; ++i)
      detail::basic_tokenize(lines[i], bo, [&](std::string_view w) {
        if (!detail::is_special_string(w)) ++m[std::string(w)];
      });
  });
  std::unordered_map<std::string, int64_t> counts;
  for (auto& m : local)
    for (auto& [w, c] : m) counts[w] += c;
  local.clear();
  WordCounts word_counts(counts.begin(), counts.end());
  counts.clear();
  std::sort(word_counts.begin(), word_counts.end());
  return word_counts;
}

// 2. Alphabet: the `limit` most frequent characters (ties: smaller code point), in code point
// order. Characters outside it are dropped from the words (as HF's WordPiece trainer does).
std::vector<char32_t> choose_alphabet(const WordCounts& word_counts, const std::vector<std::u32string>& word_cps,
                                      int64_t limit) {
  std::unordered_map<char32_t, int64_t> char_freq;
  for (size_t w = 0; w < word_counts.size(); ++w)
    for (char32_t c : word_cps[w]) char_freq[c] += word_counts[w].second;
  std::vector<std::pair<char32_t, int64_t>> chars(char_freq.begin(), char_freq.end());
  std::sort(chars.begin(), chars.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (int64_t(chars.size()) > limit) chars.resize(size_t(limit));
  std::vector<char32_t> alphabet;
  for (const auto& [c, f] : chars) alphabet.push_back(c);
  std::sort(alphabet.begin(), alphabet.end());
  return alphabet;
}

// The vocabulary being built: tokens in id order.
struct Vocab {
  std::vector<std::string> tokens;
  std::unordered_map<std::string, int32_t> ids;
  int32_t add(const std::string& t) {  // the id of t, added when new
    auto it = ids.find(t);
    if (it != ids.end()) return it->second;
    tokens.push_back(t);
    return ids[t] = int32_t(tokens.size() - 1);
  }
};

// 3. Initial vocabulary: the specials, every alphabet character, then "##c" for each character
// that occurs inside a word (after its first character).
Vocab initial_vocab(const std::vector<char32_t>& alphabet, const std::unordered_set<char32_t>& in_alphabet,
                    const std::vector<std::u32string>& word_cps) {
  Vocab v;
  for (const char* s : kSpecials) v.add(s);
  for (char32_t c : alphabet) v.add(unicode::encode(std::u32string(1, c)));
  std::vector<char32_t> cont_chars;
  for (const auto& cps : word_cps)
    for (size_t i = 1; i < cps.size(); ++i)
      if (in_alphabet.count(cps[i])) cont_chars.push_back(cps[i]);
  std::sort(cont_chars.begin(), cont_chars.end());
  cont_chars.erase(std::unique(cont_chars.begin(), cont_chars.end()), cont_chars.end());
  for (char32_t c : cont_chars) v.add("##" + unicode::encode(std::u32string(1, c)));
  return v;
}

// 4-5. The words as symbol-id sequences with counts of adjacent pairs, and the merges. A heap
// holds (count, pair) entries; an entry whose count is stale is re-pushed with the current count
// when popped, so only the pairs a merge touches are updated (O(affected words) per merge).
class PairMerger {
 public:
  PairMerger(std::vector<std::vector<int32_t>> words, const WordCounts& word_counts)
      : words_(std::move(words)), word_counts_(word_counts), stamp_(words_.size(), 0) {
    for (size_t w = 0; w < words_.size(); ++w) {
      const auto& s = words_[w];
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        const uint64_t k = key(s[i], s[i + 1]);
        pair_count_[k] += word_counts_[w].second;
        auto& where = pair_words_[k];
        if (where.empty() || where.back() != w) where.push_back(uint32_t(w));
      }
    }
    for (const auto& [k, c] : pair_count_) heap_.push({c, k});
  }

  static int32_t first(uint64_t pair) { return int32_t(pair >> 32); }
  static int32_t second(uint64_t pair) { return int32_t(pair & 0xFFFFFFFFu); }

  // The most frequent pair with its current count (ties: the smaller pair key); false when none.
  bool pop_best(PairHeapItem* best) {
    while (!heap_.empty()) {
      const PairHeapItem top = heap_.top();
      heap_.pop();
      auto pc = pair_count_.find(top.pair);
      const int64_t current = pc == pair_count_.end() ? 0 : pc->second;
      if (current == top.count) {
        *best = top;
        return true;
      }
      if (current > 0) heap_.push({current, top.pair});
    }
    return false;
  }

  // Replaces every occurrence of `pair` (a, b) by the symbol `c` and updates the counts of the
  // pairs around it: (x, a) → (x, c) and (b, y) → (c, y).
  void merge(uint64_t pair, int32_t c) {
    const int32_t a = first(pair), b = second(pair);
    ++merge_no_;
    touched_.clear();
    std::vector<uint32_t> where = std::move(pair_words_[pair]);
    pair_words_.erase(pair);
    std::vector<int32_t> res;
    for (uint32_t w : where) {
      if (stamp_[w] == merge_no_) continue;  // listed twice
      stamp_[w] = merge_no_;
      auto& s = words_[w];
      const int64_t f = word_counts_[w].second;
      res.clear();
      bool any = false;
      for (size_t i = 0; i < s.size();) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          any = true;
          if (!res.empty()) {
            change(res.back(), a, -f, w);
            change(res.back(), c, f, w);
          }
          if (i + 2 < s.size()) {
            change(b, s[i + 2], -f, w);
            change(c, s[i + 2], f, w);
          }
          pair_count_[pair] -= f;
          res.push_back(c);
          i += 2;
        } else {
          res.push_back(s[i++]);
        }
      }
      if (any) s = res;
    }
    pair_count_.erase(pair);
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
    for (uint64_t k : touched_) {
      const int64_t cnt = pair_count_[k];
      if (cnt > 0) heap_.push({cnt, k});
    }
  }

 private:
  static uint64_t key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
  void change(int32_t x, int32_t y, int64_t delta, uint32_t w) {
    const uint64_t k = key(x, y);
    pair_count_[k] += delta;
    if (delta > 0) {
      auto& wl = pair_words_[k];
      if (wl.empty() || wl.back() != w) wl.push_back(w);
      touched_.push_back(k);
    }
  }

  std::vector<std::vector<int32_t>> words_;  // symbol ids per distinct word
  const WordCounts& word_counts_;            // the count of each word (same index)
  std::unordered_map<uint64_t, int64_t> pair_count_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> pair_words_;  // words that hold a pair
  std::priority_queue<PairHeapItem> heap_;
  std::vector<uint32_t> stamp_;  // last merge that rewrote each word
  uint32_t merge_no_ = 0;
  std::vector<uint64_t> touched_;  // pairs whose count grew in this merge
};

// Word i as symbol ids: the first character as itself, the others as "##c"; characters outside
// the alphabet are dropped.
std::vector<std::vector<int32_t>> words_as_symbols(const std::vector<std::u32string>& word_cps,
                                                   const std::unordered_set<char32_t>& in_alphabet, const Vocab& v) {
  std::vector<std::vector<int32_t>> words(word_cps.size());
  for (size_t w = 0; w < words.size(); ++w) {
    const auto& cps = word_cps[w];
    for (size_t i = 0; i < cps.size(); ++i) {
      if (!in_alphabet.count(cps[i])) continue;
      const std::string ch = unicode::encode(std::u32string(1, cps[i]));
      words[w].push_back(v.ids.at(i == 0 ? ch : "##" + ch));
    }
  }
  return words;
}

}  // namespace

std::vector<std::string> learn_wordpiece_vocab(const std::vector<std::string>& lines,
                                               const TokenizerTrainOptions& o) {
  const WordCounts word_counts = count_words(lines, o);  // sorted by word
  std::vector<std::u32string> word_cps(word_counts.size());
  for (size_t w = 0; w < word_counts.size(); ++w) word_cps[w] = unicode::decode(word_counts[w].first);
  const std::vector<char32_t> alphabet = choose_alphabet(word_counts, word_cps, o.limit_alphabet);
  const std::unordered_set<char32_t> in_alphabet(alphabet.begin(), alphabet.end());
  Vocab vocab = initial_vocab(alphabet, in_alphabet, word_cps);
  PairMerger merger(words_as_symbols(word_cps, in_alphabet, vocab), word_counts);
  word_cps.clear();
  // Merge the most frequent pair into a new token ("ab" + "##c" → "abc") until the vocabulary
  // is full or no pair occurs min_frequency times.
  const size_t target = size_t(std::max<int64_t>(o.vocab_size, 0));
  PairHeapItem best{};
  while (vocab.tokens.size() < target && merger.pop_best(&best)) {
    if (best.count < std::max<int64_t>(1, o.min_frequency)) break;
    const std::string& tb = vocab.tokens[size_t(PairMerger::second(best.pair))];
    const std::string merged = vocab.tokens[size_t(PairMerger::first(best.pair))] +
                               (tb.size() > 2 && tb[0] == '#' && tb[1] == '#' ? tb.substr(2) : tb);
    merger.merge(best.pair, vocab.add(merged));
  }
  if (vocab.tokens.size() > target && target > 0)
    spdlog::warn("[tokenizer] the alphabet alone gives {} tokens, more than the requested vocab size {}",
                 vocab.tokens.size(), target);
  return vocab.tokens;
}

std::string train_tokenizer(const TokenizerTrainOptions& o) {
  if (o.inputs.empty()) throw Error("tokenizer training needs at least one --input file");
  if (o.vocab_size < 10) throw Error("--vocab-size " + std::to_string(o.vocab_size) + " is too small");
  if (o.type != "sentencepiece" && o.type != "wordpiece")
    throw Error("tokenizer type '" + o.type + "' is unknown (expected sentencepiece or wordpiece)");
  fs::create_directories(o.output_dir);
  const std::vector<std::string> lines = read_text_lines(o.inputs);
  spdlog::info("[tokenizer] training {} (vocab {}) on {} lines of {} file(s)", o.type, o.vocab_size, lines.size(),
               o.inputs.size());
  if (o.type == "sentencepiece") return train_sentencepiece(lines, o);
  const std::vector<std::string> vocab = learn_wordpiece_vocab(lines, o);
  if (vocab.size() <= 5) throw Error("tokenizer training: the input files hold no text");
  std::string text;
  for (const auto& t : vocab) text += t + "\n";
  fs::write_file_atomic((std::filesystem::path(o.output_dir) / "vocab.txt").string(), text);
  write_json(o.output_dir, "wordpiece", "vocab.txt", o);
  return (std::filesystem::path(o.output_dir) / kTokenizerJson).string();
}

}  // namespace tisa::text
