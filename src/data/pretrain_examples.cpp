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
  const Span<int64_t> docs = split_->document_offsets();
  const Span<int64_t> sents = split_->sentence_offsets();
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

PretrainExample ExampleBuilder::build(const EpochPlan& plan, int64_t index) const {
  if (index < 0 || index >= plan.size())
    throw Error("pretraining data: example " + std::to_string(index) + " outside epoch " +
                std::to_string(plan.epoch) + " of " + std::to_string(plan.size()) + " examples");
  const Chunk& c = plan.chunks[static_cast<size_t>(index)];
  CounterRng rng({options_.seed, static_cast<uint64_t>(RngStream::kExample),
                  static_cast<uint64_t>(epoch_key(plan.epoch)), static_cast<uint64_t>(c.id)});
  const Span<int64_t> sents = split_->sentence_offsets();

  // --- A and B
  std::vector<int32_t> a, b;
  std::vector<uint8_t> a_start, b_start;
  const int64_t n_sent = c.end_sentence - c.first_sentence;
  if (n_sent >= 2) {
    const int64_t a_end = c.first_sentence + rng.randint(1, n_sent - 1);
    split_->append_tokens(sents[c.first_sentence], sents[a_end], a, &a_start);
    split_->append_tokens(sents[a_end], sents[c.end_sentence], b, &b_start);
  } else {
    const int64_t begin = sents[c.first_sentence], end = sents[c.end_sentence];
    std::vector<int64_t> cuts;  // word starts strictly inside the sentence
    for (int64_t t = begin + 1; t < end; ++t)
      if (split_->word_start(t)) cuts.push_back(t);
    const int64_t cut = cuts.empty() ? rng.randint(begin + 1, end - 1)
                                     : cuts[static_cast<size_t>(rng.below(cuts.size()))];
    split_->append_tokens(begin, cut, a, &a_start);
    split_->append_tokens(cut, end, b, &b_start);
  }
  PretrainExample ex;
  if (rng.bernoulli(0.5)) {
    std::swap(a, b);
    std::swap(a_start, b_start);
    ex.sop_label = 1;
  }

  // --- truncate_seq_pair: both sides keep ≥ 1 token (each starts with ≥ 1, and the longer one
  // is cut, so neither reaches 0 while the total exceeds max_tokens ≥ 2).
  const size_t max_tokens = static_cast<size_t>(options_.max_seq_length - 3);
  size_t a_lo = 0, a_hi = a.size(), b_lo = 0, b_hi = b.size();
  while ((a_hi - a_lo) + (b_hi - b_lo) > max_tokens) {
    const bool cut_a = (a_hi - a_lo) > (b_hi - b_lo);
    size_t& lo = cut_a ? a_lo : b_lo;
    size_t& hi = cut_a ? a_hi : b_hi;
    if (rng.bernoulli(0.5)) ++lo;
    else --hi;
  }

  // --- [CLS] A [SEP] B [SEP]; word_start per position (-1 = special, never a candidate)
  const size_t len = (a_hi - a_lo) + (b_hi - b_lo) + 3;
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
  for (size_t i = a_lo; i < a_hi; ++i) push(a[i], 0, i == a_lo ? 1 : static_cast<int8_t>(a_start[i]));
  push(special_.sep, 0, -1);
  for (size_t i = b_lo; i < b_hi; ++i) push(b[i], 1, i == b_lo ? 1 : static_cast<int8_t>(b_start[i]));
  push(special_.sep, 1, -1);

  // --- whole words: [begin, end) position ranges, with the segment of each
  struct Word {
    int32_t begin, end, segment;
  };
  std::vector<Word> words;
  for (size_t i = 0; i < len; ++i) {
    const int32_t id = ex.input_ids[i];
    if (starts[i] < 0 || is_special(id)) continue;
    const bool continues = !words.empty() && starts[i] == 0 && words.back().end == static_cast<int32_t>(i) &&
                           words.back().segment == ex.token_type_ids[i];
    if (continues) ++words.back().end;
    else words.push_back(Word{static_cast<int32_t>(i), static_cast<int32_t>(i) + 1, ex.token_type_ids[i]});
  }

  // --- n-gram masking. n is drawn first (p(n) ∝ 1/n), then the first word start in the
  // shuffled order where an n-gram of n whole words fits (same segment, nothing covered, within
  // the budget) takes it. Drawing n before the start keeps the chosen lengths at 6/11, 3/11,
  // 2/11; ALBERT draws per start and skips overlapping draws, which favours short n-grams. When
  // no start fits n, n is shortened (near the end of the budget or of the text).
  const int64_t budget = std::min<int64_t>(
      options_.max_predictions_per_seq,
      std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(options_.masked_lm_prob * static_cast<double>(len)))));
  std::vector<int32_t> order(words.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<uint8_t> word_used(words.size(), 0);
  std::vector<std::pair<int32_t, int32_t>> masked;  // (position, original id)
  const int64_t max_ngram = options_.max_ngram;
  double weight_total = 0;
  for (int64_t n = 1; n <= max_ngram; ++n) weight_total += 1.0 / static_cast<double>(n);
  auto fits = [&](int32_t w, int64_t n, int64_t room) {
    if (w + n > static_cast<int64_t>(words.size())) return false;
    for (int64_t k = 0; k < n; ++k) {
      if (word_used[w + k] || words[w + k].segment != words[w].segment) return false;
      if (k > 0 && words[w + k].begin != words[w + k - 1].end) return false;  // a special in between
    }
    return words[w + n - 1].end - words[w].begin <= room;
  };
  while (static_cast<int64_t>(masked.size()) < budget && !order.empty()) {
    double u = rng.uniform() * weight_total;
    int64_t n = 1;
    for (; n < max_ngram; ++n) {
      u -= 1.0 / static_cast<double>(n);
      if (u < 0) break;
    }
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
  return ex;
}

}  // namespace tisa::data
