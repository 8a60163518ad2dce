// Corpus → binary pretraining dataset (see prepare_pretrain.h).
#include "prep/prepare_pretrain.h"

#include <filesystem>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "common/fs.h"
#include "common/progress.h"
#include "prep/corpus_source.h"
#include "prep/validation_split.h"
#include "text/batch_encode.h"
#include "text/tokenizer.h"
#include "tisa_build_info.h"

namespace tisa::prep {
namespace {

// The dataset carries its own copy of the tokenizer (spiece.model or vocab.txt, plus our
// tisa_tokenizer.json when the tokenizer was a trained directory), so that the trainer can put it
// beside the final model without depending on the path `prepare` was given.
void copy_tokenizer_into_dataset(const std::string& tokenizer_path, const std::string& type,
                                 const std::string& output_dir) {
  namespace stdfs = std::filesystem;
  if (stdfs::is_directory(tokenizer_path)) {
    for (const char* name : {"spiece.model", "vocab.txt", "tisa_tokenizer.json"}) {
      const auto src = stdfs::path(tokenizer_path) / name;
      if (stdfs::exists(src)) fs::write_file_atomic((stdfs::path(output_dir) / name).string(), fs::read_file(src.string()));
    }
    // A directory holding a single differently named .model: store it under the standard name.
    if (type == "sentencepiece" && !stdfs::exists(stdfs::path(output_dir) / "spiece.model")) {
      for (const auto& entry : stdfs::directory_iterator(tokenizer_path))
        if (entry.path().extension() == ".model") {
          fs::write_file_atomic((stdfs::path(output_dir) / "spiece.model").string(), fs::read_file(entry.path().string()));
          break;
        }
    }
    return;
  }
  const char* name = type == "wordpiece" ? "vocab.txt" : "spiece.model";
  fs::write_file_atomic((stdfs::path(output_dir) / name).string(), fs::read_file(tokenizer_path));
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %%", 100.0 * share);
  return buf;
}

// "read N bytes, text T, kept K (x %), dropped: reason n, ..."
std::string drop_summary(const ReadReport& r) {
  std::string s = "read " + std::to_string(r.bytes) + " bytes (" + compression_name(r.compression) + "), " +
                  corpus_format_name(r.format) + " format: text " + std::to_string(r.text_bytes) + " bytes, kept " +
                  std::to_string(r.kept_bytes) + " (" +
                  percent(r.text_bytes ? static_cast<double>(r.kept_bytes) / static_cast<double>(r.text_bytes) : 1.0) +
                  ")";
  for (const auto& [reason, bytes] : r.dropped) s += ", dropped " + std::to_string(bytes) + " as " + reason;
  return s;
}

void log_file_report(const ReadReport& r) {
  spdlog::info("[data] {}: {}; {} documents, {} sentences{}", r.path, drop_summary(r), r.documents, r.sentences,
               r.documents_cut ? ", " + std::to_string(r.documents_cut) + " documents cut at 64 MiB" : "");
}

// Batches of documents from the reader thread to the tokenising one, in order, bounded.
class BatchQueue {
 public:
  explicit BatchQueue(size_t capacity) : capacity_(capacity) {}
  void push(std::vector<TextDocument>&& batch) {
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [&] { return items_.size() < capacity_ || cancelled_; });
    if (cancelled_) throw Cancelled{};
    items_.push_back(std::move(batch));
    ready_.notify_one();
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    ready_.notify_one();
  }
  void fail(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!cancelled_) error_ = error;  // a cancelled reader's Cancelled is no error to report
    closed_ = true;
    ready_.notify_one();
  }
  void cancel() {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
    space_.notify_all();
  }
  // The next batch; false after the last. Rethrows the reader's error.
  bool pop(std::vector<TextDocument>& out) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    out = std::move(items_.front());
    items_.pop_front();
    space_.notify_one();
    return true;
  }

 private:
  struct Cancelled {};
  size_t capacity_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<std::vector<TextDocument>> items_;
  bool closed_ = false, cancelled_ = false;
  std::exception_ptr error_;
};

}  // namespace

PreparePretrainReport prepare_pretrain(const PreparePretrainOptions& o, const text::Tokenizer& tok) {
  if (o.inputs.empty()) throw Error("prepare pretrain: no --input files");
  if (!(o.valid_fraction >= 0 && o.valid_fraction < 1))
    throw Error("prepare pretrain: --valid-fraction must lie in [0, 1), got " + std::to_string(o.valid_fraction));
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::string> files = expand_inputs(o.inputs);
  PreparePretrainReport report;
  const ValidationSplitRule rule{o.valid_fraction, o.seed, o.valid_max_document_bytes};

  data::DatasetTokenizerInfo info;
  info.identity = tok.identity();
  info.type = tok.type();
  info.vocab_size = tok.vocab_size();
  const auto& sp = tok.special_ids();
  info.special_ids = {sp.pad, sp.unk, sp.cls, sp.sep, sp.mask};
  std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  nlohmann::json created = {{"by", "tisa-train prepare pretrain"},
                            {"version", TISA_VERSION},
                            {"time", when},
                            {"inputs", o.inputs},
                            {"format", corpus_format_name(o.format)},
                            {"tokenizer_path", o.tokenizer_path},
                            {"valid_split",
                             {{"rule", "content-hash"},
                              {"fraction", o.valid_fraction},
                              {"max_document_bytes", o.valid_max_document_bytes},
                              {"seed", o.seed}}}};
  if (o.format == CorpusFormat::kJsonl || o.format == CorpusFormat::kAuto) created["text_field"] = o.reader.text_field;
  data::ShardedDatasetWriter writer(o.output, info, created, o.shard_tokens);
  const int32_t forbidden[] = {sp.pad, sp.cls, sp.sep, sp.mask};
  int64_t valid_bytes = 0, text_bytes = 0;

  // Tokenises and writes one batch of documents, in order.
  auto write_batch = [&](std::vector<TextDocument>& batch) {
    std::vector<uint8_t> valid(batch.size());
    std::vector<size_t> sentence_counts(batch.size());
    std::vector<std::string> sentences;
    for (size_t k = 0; k < batch.size(); ++k) {
      int64_t bytes = 0;
      for (const auto& sentence : batch[k]) bytes += static_cast<int64_t>(sentence.size());
      valid[k] = is_validation_document(rule, document_content_hash(batch[k]), bytes);
      text_bytes += bytes;
      if (valid[k]) valid_bytes += bytes;
      sentence_counts[k] = batch[k].size();
      for (auto& sentence : batch[k]) sentences.push_back(std::move(sentence));
    }
    const auto ids = text::encode_batch(tok, sentences, o.threads);
    size_t s = 0;
    for (size_t k = 0; k < batch.size(); ++k) {
      data::DocumentTokens doc(sentence_counts[k]);
      for (auto& st : doc) {
        st.ids = ids[s++];
        if (st.ids.empty()) ++report.sentences_without_tokens;
        st.word_start.resize(st.ids.size());
        for (size_t i = 0; i < st.ids.size(); ++i) {
          for (int32_t bad : forbidden)
            if (bad >= 0 && st.ids[i] == bad) {
              st.ids[i] = sp.unk >= 0 ? sp.unk : st.ids[i];
              ++report.specials_replaced;
            }
          report.unk_tokens += st.ids[i] == sp.unk;
          st.word_start[i] = tok.is_word_start(st.ids[i]) ? 1 : 0;
        }
        if (!st.ids.empty()) st.word_start[0] = 1;  // a sentence starts a word
      }
      writer.add_document(valid[k] ? "valid" : "train", doc);
    }
  };

  // A reader thread parses the files into batches of ~4 MB of text (two waiting at most, so
  // memory stays flat) while this thread tokenises and writes: reading overlaps tokenising.
  BatchQueue queue(2);
  int64_t disk_total = 0;
  for (const auto& f : files) disk_total += static_cast<int64_t>(std::filesystem::file_size(f));
  std::atomic<int64_t> disk_done{0};  // file bytes the reader has consumed (progress only)
  std::thread reader([&] {
    try {
      std::vector<TextDocument> batch;
      size_t batch_bytes = 0;
      int64_t files_done = 0;
      ReaderOptions reader_options = o.reader;
      reader_options.progress = [&](int64_t offset) { disk_done = files_done + offset; };
      for (const std::string& path : files) {
        ReadReport r = read_corpus_file(path, o.format, reader_options, [&](TextDocument&& d) {
          for (const auto& sentence : d) batch_bytes += sentence.size();
          batch.push_back(std::move(d));
          if (batch_bytes >= (4u << 20)) {
            queue.push(std::move(batch));
            batch.clear();
            batch_bytes = 0;
          }
        });
        log_file_report(r);
        if (r.dropped_share() > o.max_drop_share)
          throw Error(path + ": " + drop_summary(r) + ". Read as " + corpus_format_name(r.format) + ", " +
                      percent(r.dropped_share()) + " of its text would be dropped as headings or titles (limit " +
                      "--max-drop-share " + std::to_string(o.max_drop_share) +
                      "): the file is probably not in that format; choose another --format (lines keeps every " +
                      "line) or raise --max-drop-share if the loss is wanted");
        report.files.push_back(std::move(r));  // read by this thread only until it is joined
        files_done += static_cast<int64_t>(std::filesystem::file_size(path));
        disk_done = files_done;
      }
      if (!batch.empty()) queue.push(std::move(batch));
      queue.close();
    } catch (...) {
      queue.fail(std::current_exception());
    }
  });
  // Progress over the inputs' bytes on disk (compressed files count as stored): a line now and
  // then on a terminal, every 1,000 MB in logs.
  Progress progress("[data] prepare", std::max<int64_t>(1, (disk_total + 999999) / 1000000), "tok", 1000);
  try {
    for (std::vector<TextDocument> batch; queue.pop(batch);) {
      const data::SplitCounts before = writer.counts("train");
      const data::SplitCounts before_valid = writer.counts("valid");
      write_batch(batch);
      const double tokens = static_cast<double>(writer.counts("train").tokens - before.tokens +
                                                writer.counts("valid").tokens - before_valid.tokens);
      progress.update(disk_done.load() / 1000000, tokens);
    }
    progress.finish();
  } catch (...) {
    progress.finish();
    queue.cancel();  // the reader stops at its next push
    reader.join();
    throw;
  }
  reader.join();
  for (const auto& r : report.files) report.input_bytes += r.bytes;
  const data::SplitCounts train = writer.counts("train"), valid = writer.counts("valid");
  if (train.documents + valid.documents == 0) throw Error("prepare pretrain: the inputs hold no text");
  if (train.documents == 0)
    throw Error("prepare pretrain: every document went to the valid split (--valid-fraction " +
                std::to_string(o.valid_fraction) + "); lower it");
  if (o.valid_fraction > 0 && valid.documents == 0)
    spdlog::warn("[data] no document of the {} was drawn for the valid split (each is drawn with probability "
                 "--valid-fraction {}, documents over --valid-max-document-bytes {} never): the split is empty; raise "
                 "--valid-fraction or try another --seed if this dataset is trained on alone",
                 train.documents, o.valid_fraction, o.valid_max_document_bytes);
  if (o.valid_fraction > 0) {
    const double share = static_cast<double>(valid_bytes) / static_cast<double>(std::max<int64_t>(text_bytes, 1));
    spdlog::info("[data] valid split: {} of {} documents, {:.2f} % of the text (--valid-fraction {})", valid.documents,
                 valid.documents + train.documents, 100.0 * share, o.valid_fraction);
    if (share > 2 * o.valid_fraction || share < 0.5 * o.valid_fraction)
      spdlog::warn("[data] the valid split holds {:.2f} % of the text, far from --valid-fraction {}: with few "
                   "documents the per-document draw is coarse",
                   100.0 * share, o.valid_fraction);
  }
  copy_tokenizer_into_dataset(o.tokenizer_path, tok.type(), o.output);  // before finish(): the manifest hashes it
  report.header = writer.finish();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (report.specials_replaced > 0)
    spdlog::warn("[data] {} special-token ids in the text were replaced by unk", report.specials_replaced);
  if (report.sentences_without_tokens > 0)
    spdlog::warn("[data] {} sentences gave no token ids and were not written", report.sentences_without_tokens);
  return report;
}

}  // namespace tisa::prep
