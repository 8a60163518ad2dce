// Segmentation, SOP pairs and whole-word n-gram masking of pretraining examples (rules in the
// header; SPEC §5).
#include "data/pretrain_examples.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace tisa::data {

void ExampleOptions::validate() const {
  auto bad = [](const std::string& key, const std::string& what) {
    throw Error("data." + key + ": " + what);
  };
  if (max_seq_length < 5) bad("max_seq_length", "must be at least 5 ([CLS] a [SEP] b [SEP])");
  if (max_predictions_per_seq < 1) bad("max_predictions_per_seq", "must be at least 1");
  if (!(masked_lm_prob > 0 && masked_lm_prob < 1)) bad("masked_lm_prob", "must lie in (0, 1)");
  if (!(short_seq_prob >= 0 && short_seq_prob <= 1)) bad("short_seq_prob", "must lie in [0, 1]");
  if (max_ngram < 1) bad("max_ngram", "must be at least 1");
  if (static_masking && dupe_factor < 1) bad("dupe_factor", "must be at least 1 for static masking");
}

ExampleBuilder::ExampleBuilder(std::shared_ptr<const PretrainDataset> dataset, const std::string& split,
                               ExampleOptions options)
    : dataset_(std::move(dataset)), split_(&dataset_->split(split)), options_(options) {
  options_.validate();
  const PretrainHeader& h = dataset_->header();
  special_ = h.tokenizer.special_ids;
  vocab_size_ = h.tokenizer.vocab_size;
  for (int32_t id : {special_.pad, special_.unk, special_.cls, special_.sep, special_.mask})
    if (id >= 0) specials_sorted_.push_back(id);
  std::sort(specials_sorted_.begin(), specials_sorted_.end());
  specials_sorted_.erase(std::unique(specials_sorted_.begin(), specials_sorted_.end()), specials_sorted_.end());
  if (special_.cls < 0 || special_.sep < 0 || special_.mask < 0)
    throw Error(dataset_->dir() + ": the tokenizer of this dataset has no [CLS]/[SEP]/[MASK] ids; "
                "pretraining needs all three");
  if (vocab_size_ <= static_cast<int64_t>(specials_sorted_.size()))
    throw Error(dataset_->dir() + ": vocabulary has no normal tokens");
}

bool ExampleBuilder::is_special(int32_t id) const {
  return std::binary_search(specials_sorted_.begin(), specials_sorted_.end(), id);
}

int64_t ExampleBuilder::epoch_key(int64_t epoch) const {
  return options_.static_masking ? epoch % options_.dupe_factor : epoch;
}

int32_t ExampleBuilder::random_normal_id(CounterRng& rng) const {
  // Uniform over the ids that are not special: draw an index among the normal ids and step over
  // the (sorted) specials below it.
  int64_t r = static_cast<int64_t>(rng.below(static_cast<uint64_t>(vocab_size_) - specials_sorted_.size()));
  for (int32_t s : specials_sorted_)
    if (s <= r) ++r;
  return static_cast<int32_t>(r);
}

std::shared_ptr<const EpochPlan> ExampleBuilder::plan(int64_t epoch) const {
  if (epoch < 0) throw Error("pretraining data: negative epoch " + std::to_string(epoch));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(epoch);
    if (it != plans_.end()) return it->second;
  }
  auto p = make_plan(epoch);  // outside the lock: O(sentences)
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = plans_.emplace(epoch, p);
  while (plans_.size() > 4) plans_.erase(plans_.begin()->first == epoch ? std::next(plans_.begin()) : plans_.begin());
  (void)inserted;
  return it->second;
}

std::shared_ptr<const EpochPlan> ExampleBuilder::make_plan(int64_t epoch) const {
  auto plan = std::make_shared<EpochPlan>();
  plan->epoch = epoch;
  const uint64_t key = static_cast<uint64_t>(epoch_key(epoch));
  const int64_t max_tokens = options_.max_seq_length - 3;
  const OffsetView docs = split_->document_offsets();
  const OffsetView sents = split_->sentence_offsets();
  auto& chunks = plan->chunks;
  chunks.reserve(static_cast<size_t>(split_->num_tokens() / std::max<int64_t>(1, max_tokens / 2) + 16));
  for (int64_t d = 0; d < split_->num_documents(); ++d) {
    CounterRng rng({options_.seed, static_cast<uint64_t>(RngStream::kSegmentation), key, static_cast<uint64_t>(d)});
    auto draw_target = [&] {
      return rng.bernoulli(options_.short_seq_prob) ? rng.randint(2, max_tokens) : max_tokens;
    };
    int64_t target = draw_target();
    int64_t first = docs[d];
    int64_t length = 0;
    for (int64_t s = docs[d]; s < docs[d + 1]; ++s) {
      length += sents[s + 1] - sents[s];
      if (s + 1 == docs[d + 1] || length >= target) {
        if (length >= 2) chunks.push_back(Chunk{first, s + 1, static_cast<int64_t>(chunks.size())});
        first = s + 1;
        length = 0;
        target = draw_target();
      }
    }
  }
  // Fisher-Yates with the epoch's own stream (static masking too: a new order every epoch).
  CounterRng order({options_.seed, static_cast<uint64_t>(RngStream::kOrder), static_cast<uint64_t>(epoch)});
  for (size_t i = chunks.size(); i > 1; --i) std::swap(chunks[i - 1], chunks[order.below(i)]);
  return plan;
}

PretrainExample ExampleBuilder::build(int64_t epoch, int64_t index) const {
  return build(*plan(epoch), index);
}

// Two segments of a chunk and which of their tokens start a word; [lo, hi) is what is left of
// each after truncation.
struct ExampleBuilder::SegmentPair {
  std::vector<int32_t> a, b;
  std::vector<uint8_t> a_start, b_start;
  size_t a_lo = 0, a_hi = 0, b_lo = 0, b_hi = 0;
};

// A whole word of the assembled example: positions [begin, end) and its segment.
struct ExampleBuilder::Word {
  int32_t begin, end, segment;
};

namespace {

// The n-gram length to try first: p(n) ∝ 1/n for n = 1..max_ngram.
int64_t draw_ngram_length(CounterRng& rng, int64_t max_ngram) {
  double weight_total = 0;
  for (int64_t n = 1; n <= max_ngram; ++n) weight_total += 1.0 / static_cast<double>(n);
  double u = rng.uniform() * weight_total;
  int64_t n = 1;
  for (; n < max_ngram; ++n) {
    u -= 1.0 / static_cast<double>(n);
    if (u < 0) break;
  }
  return n;
}

}  // namespace

// Builds one example (rules in the header; SPEC §5). Every random choice comes from one counter
// generator keyed by (seed, epoch, chunk id), so an example does not depend on which worker
// builds it or on which examples were built before; the steps below draw from it in this order.
PretrainExample ExampleBuilder::build(const EpochPlan& plan, int64_t index) const {
  if (index < 0 || index >= plan.size())
    throw Error("pretraining data: example " + std::to_string(index) + " outside epoch " +
                std::to_string(plan.epoch) + " of " + std::to_string(plan.size()) + " examples");
  const Chunk& c = plan.chunks[static_cast<size_t>(index)];
  CounterRng rng({options_.seed, static_cast<uint64_t>(RngStream::kExample),
                  static_cast<uint64_t>(epoch_key(plan.epoch)), static_cast<uint64_t>(c.id)});
  SegmentPair pair = split_chunk(c, rng);
  PretrainExample ex;
  if (rng.bernoulli(0.5)) {  // sentence-order prediction: label 1 = swapped
    std::swap(pair.a, pair.b);
    std::swap(pair.a_start, pair.b_start);
    ex.sop_label = 1;
  }
  truncate_pair(pair, rng);
  const std::vector<int8_t> starts = assemble(pair, ex);
  mask_ngrams(whole_words(ex, starts), rng, ex);
  return ex;
}

// A and B: a chunk of several sentences is cut at a random sentence boundary; a one-sentence
// chunk at a random word start inside it (any token boundary when it is one word).
ExampleBuilder::SegmentPair ExampleBuilder::split_chunk(const Chunk& c, CounterRng& rng) const {
  const OffsetView sents = split_->sentence_offsets();
  SegmentPair p;
  const int64_t n_sent = c.end_sentence - c.first_sentence;
  if (n_sent >= 2) {
    const int64_t a_end = c.first_sentence + rng.randint(1, n_sent - 1);
    split_->append_tokens(sents[c.first_sentence], sents[a_end], p.a, &p.a_start);
    split_->append_tokens(sents[a_end], sents[c.end_sentence], p.b, &p.b_start);
    return p;
  }
  const int64_t begin = sents[c.first_sentence], end = sents[c.end_sentence];
  std::vector<int64_t> cuts;  // word starts strictly inside the sentence
  for (int64_t t = begin + 1; t < end; ++t)
    if (split_->word_start(t)) cuts.push_back(t);
  const int64_t cut = cuts.empty() ? rng.randint(begin + 1, end - 1) : cuts[static_cast<size_t>(rng.below(cuts.size()))];
  split_->append_tokens(begin, cut, p.a, &p.a_start);
  split_->append_tokens(cut, end, p.b, &p.b_start);
  return p;
}

// truncate_seq_pair to max_seq_length - 3 tokens (room for [CLS] [SEP] [SEP]), one token at a
// time from a random end of the longer side. Both sides keep ≥ 1 token (each starts with ≥ 1, and
// the longer one is cut, so neither reaches 0 while the total exceeds max_tokens ≥ 2).
void ExampleBuilder::truncate_pair(SegmentPair& p, CounterRng& rng) const {
  const size_t max_tokens = static_cast<size_t>(options_.max_seq_length - 3);
  p.a_hi = p.a.size(), p.b_hi = p.b.size();
  while ((p.a_hi - p.a_lo) + (p.b_hi - p.b_lo) > max_tokens) {
    const bool cut_a = (p.a_hi - p.a_lo) > (p.b_hi - p.b_lo);
    size_t& lo = cut_a ? p.a_lo : p.b_lo;
    size_t& hi = cut_a ? p.a_hi : p.b_hi;
    if (rng.bernoulli(0.5)) ++lo;
    else --hi;
  }
}

// [CLS] A [SEP] B [SEP] into ex.input_ids / token_type_ids. Returns per position whether it
// starts a word (1), continues one (0) or is a special (-1, never a masking candidate). The first
// token of a truncated side starts a word even if it did not in the text.
std::vector<int8_t> ExampleBuilder::assemble(const SegmentPair& p, PretrainExample& ex) const {
  const size_t len = (p.a_hi - p.a_lo) + (p.b_hi - p.b_lo) + 3;
  ex.input_ids.reserve(len);
  ex.token_type_ids.reserve(len);
  std::vector<int8_t> starts;
  starts.reserve(len);
  auto push = [&](int32_t id, int32_t type, int8_t start) {
    ex.input_ids.push_back(id);
    ex.token_type_ids.push_back(type);
    starts.push_back(start);
  };
  push(special_.cls, 0, -1);
  for (size_t i = p.a_lo; i < p.a_hi; ++i) push(p.a[i], 0, i == p.a_lo ? 1 : static_cast<int8_t>(p.a_start[i]));
  push(special_.sep, 0, -1);
  for (size_t i = p.b_lo; i < p.b_hi; ++i) push(p.b[i], 1, i == p.b_lo ? 1 : static_cast<int8_t>(p.b_start[i]));
  push(special_.sep, 1, -1);
  return starts;
}

// Whole words as position ranges: a word continues while its tokens do not start a word, stay
// adjacent and in one segment. Specials (also special ids inside the text) belong to none.
std::vector<ExampleBuilder::Word> ExampleBuilder::whole_words(const PretrainExample& ex,
                                                              const std::vector<int8_t>& starts) const {
  std::vector<Word> words;
  for (size_t i = 0; i < ex.input_ids.size(); ++i) {
    if (starts[i] < 0 || is_special(ex.input_ids[i])) continue;
    const bool continues = !words.empty() && starts[i] == 0 && words.back().end == static_cast<int32_t>(i) &&
                           words.back().segment == ex.token_type_ids[i];
    if (continues) ++words.back().end;
    else words.push_back(Word{static_cast<int32_t>(i), static_cast<int32_t>(i) + 1, ex.token_type_ids[i]});
  }
  return words;
}

// n-gram masking. n is drawn first (p(n) ∝ 1/n), then the first word start in the shuffled order
// where an n-gram of n whole words fits (same segment, nothing covered, within the budget) takes
// it. Drawing n before the start keeps the chosen lengths at 6/11, 3/11, 2/11; ALBERT draws per
// start and skips overlapping draws, which favours short n-grams. When no start fits n, n is
// shortened (near the end of the budget or of the text). Each masked token becomes [MASK] (80 %),
// a random normal id (10 %) or stays (10 %); the labels are the original ids, by position.
void ExampleBuilder::mask_ngrams(const std::vector<Word>& words, CounterRng& rng, PretrainExample& ex) const {
  const size_t len = ex.input_ids.size();
  const int64_t budget = std::min<int64_t>(
      options_.max_predictions_per_seq,
      std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(options_.masked_lm_prob * static_cast<double>(len)))));
  std::vector<int32_t> order(words.size());  // candidate starts, shuffled
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<uint8_t> word_used(words.size(), 0);
  std::vector<std::pair<int32_t, int32_t>> masked;  // (position, original id)
  // Does an n-gram of whole words starting at word w fit in `room` tokens?
  auto fits = [&](int32_t w, int64_t n, int64_t room) {
    if (w + n > static_cast<int64_t>(words.size())) return false;
    for (int64_t k = 0; k < n; ++k) {
      if (word_used[w + k] || words[w + k].segment != words[w].segment) return false;
      if (k > 0 && words[w + k].begin != words[w + k - 1].end) return false;  // a special in between
    }
    return words[w + n - 1].end - words[w].begin <= room;
  };
  while (static_cast<int64_t>(masked.size()) < budget && !order.empty()) {
    int64_t n = draw_ngram_length(rng, options_.max_ngram);
    const int64_t room = budget - static_cast<int64_t>(masked.size());
    int32_t chosen = -1;
    for (; n >= 1 && chosen < 0; --n) {
      size_t keep = 0;  // compacts `order`, dropping starts already covered
      for (size_t i = 0; i < order.size(); ++i) {
        const int32_t w = order[i];
        if (word_used[w]) continue;
        if (chosen < 0 && fits(w, n, room)) {
          chosen = w;
          continue;
        }
        order[keep++] = w;
      }
      order.resize(keep);
      if (chosen >= 0) break;
    }
    if (chosen < 0) break;  // not even one whole word fits the remaining budget
    for (int64_t k = 0; k < n; ++k) word_used[chosen + k] = 1;
    for (int32_t p = words[chosen].begin; p < words[chosen + n - 1].end; ++p) {
      masked.emplace_back(p, ex.input_ids[p]);
      const double r = rng.uniform();
      if (r < 0.8) ex.input_ids[p] = special_.mask;
      else if (r >= 0.9) ex.input_ids[p] = random_normal_id(rng);
    }
    ex.ngram_words.push_back(static_cast<int32_t>(n));
  }
  std::sort(masked.begin(), masked.end());
  ex.masked_positions.reserve(masked.size());
  ex.masked_labels.reserve(masked.size());
  for (auto& [p, id] : masked) {
    ex.masked_positions.push_back(p);
    ex.masked_labels.push_back(id);
  }
}

}  // namespace tisa::data
