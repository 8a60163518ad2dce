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

}  // namespace

std::vector<std::string> learn_wordpiece_vocab(const std::vector<std::string>& lines,
                                               const TokenizerTrainOptions& o) {
  detail::BasicOptions bo;
  bo.lowercase = o.lowercase;
  bo.strip_accents = o.lowercase && !o.keep_accents;
  // 1. Word counts, one map per thread, merged.
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
  std::vector<std::pair<std::string, int64_t>> word_counts(counts.begin(), counts.end());
  counts.clear();
  std::sort(word_counts.begin(), word_counts.end());

  // 2. Alphabet: the most frequent characters.
  std::unordered_map<char32_t, int64_t> char_freq;
  std::vector<std::u32string> word_cps(word_counts.size());
  for (size_t w = 0; w < word_counts.size(); ++w) {
    word_cps[w] = unicode::decode(word_counts[w].first);
    for (char32_t c : word_cps[w]) char_freq[c] += word_counts[w].second;
  }
  std::vector<std::pair<char32_t, int64_t>> chars(char_freq.begin(), char_freq.end());
  std::sort(chars.begin(), chars.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (int64_t(chars.size()) > o.limit_alphabet) chars.resize(size_t(o.limit_alphabet));
  std::sort(chars.begin(), chars.end());
  std::unordered_map<char32_t, bool> in_alphabet;
  for (const auto& [c, f] : chars) in_alphabet[c] = true;

  // 3. Initial vocabulary.
  std::vector<std::string> vocab;
  std::unordered_map<std::string, int32_t> ids;
  auto add = [&](const std::string& t) {
    auto it = ids.find(t);
    if (it != ids.end()) return it->second;
    vocab.push_back(t);
    return ids[t] = int32_t(vocab.size() - 1);
  };
  for (const char* s : kSpecials) add(s);
  for (const auto& [c, f] : chars) add(unicode::encode(std::u32string(1, c)));
  std::vector<char32_t> cont_chars;
  for (const auto& cps : word_cps)
    for (size_t i = 1; i < cps.size(); ++i)
      if (in_alphabet.count(cps[i])) cont_chars.push_back(cps[i]);
  std::sort(cont_chars.begin(), cont_chars.end());
  cont_chars.erase(std::unique(cont_chars.begin(), cont_chars.end()), cont_chars.end());
  for (char32_t c : cont_chars) add("##" + unicode::encode(std::u32string(1, c)));

  // 4. Words as symbol sequences, pair statistics.
  std::vector<std::vector<int32_t>> words(word_counts.size());
  for (size_t w = 0; w < words.size(); ++w) {
    const auto& cps = word_cps[w];
    for (size_t i = 0; i < cps.size(); ++i) {
      if (!in_alphabet.count(cps[i])) continue;
      const std::string ch = unicode::encode(std::u32string(1, cps[i]));
      words[w].push_back(ids.at(i == 0 ? ch : "##" + ch));
    }
  }
  word_cps.clear();
  auto key = [](int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); };
  std::unordered_map<uint64_t, int64_t> pair_count;
  std::unordered_map<uint64_t, std::vector<uint32_t>> pair_words;
  for (size_t w = 0; w < words.size(); ++w) {
    const auto& s = words[w];
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      const uint64_t k = key(s[i], s[i + 1]);
      pair_count[k] += word_counts[w].second;
      auto& where = pair_words[k];
      if (where.empty() || where.back() != w) where.push_back(uint32_t(w));
    }
  }
  std::priority_queue<PairHeapItem> heap;
  for (const auto& [k, c] : pair_count) heap.push({c, k});

  // 5. Merges.
  std::vector<uint32_t> stamp(words.size(), 0);
  uint32_t merge_no = 0;
  std::vector<uint64_t> touched;
  const size_t target = size_t(std::max<int64_t>(o.vocab_size, 0));
  while (vocab.size() < target && !heap.empty()) {
    const PairHeapItem top = heap.top();
    heap.pop();
    auto pc = pair_count.find(top.pair);
    const int64_t current = pc == pair_count.end() ? 0 : pc->second;
    if (current != top.count) {
      if (current > 0) heap.push({current, top.pair});
      continue;
    }
    if (current < std::max<int64_t>(1, o.min_frequency)) break;
    const int32_t a = int32_t(top.pair >> 32), b = int32_t(top.pair & 0xFFFFFFFFu);
    const std::string& tb = vocab[size_t(b)];
    const std::string merged =
        vocab[size_t(a)] + (tb.size() > 2 && tb[0] == '#' && tb[1] == '#' ? tb.substr(2) : tb);
    const int32_t c = add(merged);
    ++merge_no;
    touched.clear();
    std::vector<uint32_t> where = std::move(pair_words[top.pair]);
    pair_words.erase(top.pair);
    auto change = [&](int32_t x, int32_t y, int64_t delta, uint32_t w) {
      const uint64_t k = key(x, y);
      pair_count[k] += delta;
      if (delta > 0) {
        auto& wl = pair_words[k];
        if (wl.empty() || wl.back() != w) wl.push_back(w);
        touched.push_back(k);
      }
    };
    std::vector<int32_t> res;
    for (uint32_t w : where) {
      if (stamp[w] == merge_no) continue;
      stamp[w] = merge_no;
      auto& s = words[w];
      const int64_t f = word_counts[w].second;
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
          pair_count[top.pair] -= f;
          res.push_back(c);
          i += 2;
        } else {
          res.push_back(s[i++]);
        }
      }
      if (any) s = res;
    }
    pair_count.erase(top.pair);
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (uint64_t k : touched) {
      const int64_t cnt = pair_count[k];
      if (cnt > 0) heap.push({cnt, k});
    }
  }
  if (vocab.size() > target && target > 0)
    spdlog::warn("[tokenizer] the alphabet alone gives {} tokens, more than the requested vocab size {}",
                 vocab.size(), target);
  return vocab;
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
