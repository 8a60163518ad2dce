// Corpus → binary pretraining dataset (see prepare_pretrain.h).
#include "prep/prepare_pretrain.h"

#include <filesystem>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "common/error.h"
#include "common/fs.h"
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

}  // namespace

PreparePretrainReport prepare_pretrain(const PreparePretrainOptions& o, const text::Tokenizer& tok) {
  if (o.inputs.empty()) throw Error("prepare pretrain: no --input files");
  if (!(o.valid_fraction >= 0 && o.valid_fraction < 1))
    throw Error("prepare pretrain: --valid-fraction must lie in [0, 1), got " + std::to_string(o.valid_fraction));
  const auto t0 = std::chrono::steady_clock::now();
  PreparePretrainReport report;

  // Pass 1: documents per file.
  std::vector<int64_t> docs_per_file;
  std::vector<int64_t> doc_bytes;  // every document's size, in input order
  for (const auto& path : o.inputs) {
    const std::string raw = fs::read_utf8_text_file(path);
    report.input_bytes += static_cast<int64_t>(raw.size());
    CorpusFormat used;
    const auto docs = read_corpus_text(raw, o.format, &used);
    docs_per_file.push_back(static_cast<int64_t>(docs.size()));
    for (const auto& doc : docs) {
      int64_t bytes = 0;
      for (const auto& sentence : doc) bytes += static_cast<int64_t>(sentence.size());
      doc_bytes.push_back(bytes);
    }
    report.formats.push_back(corpus_format_name(used));
    spdlog::info("[data] {}: {} format, {} documents", path, corpus_format_name(used), docs.size());
  }
  int64_t total_docs = 0;
  for (int64_t n : docs_per_file) total_docs += n;
  if (total_docs == 0) throw Error("prepare pretrain: the inputs hold no text");

  // Seeded choice of whole validation documents by share of text (validation_split.h).
  const std::vector<uint8_t> is_valid = choose_validation_documents(doc_bytes, o.valid_fraction, o.seed);
  {
    int64_t held = 0, text = 0, docs = 0;
    for (size_t d = 0; d < doc_bytes.size(); ++d) {
      text += doc_bytes[d];
      if (is_valid[d]) held += doc_bytes[d], ++docs;
    }
    const double share = static_cast<double>(held) / static_cast<double>(std::max<int64_t>(text, 1));
    if (o.valid_fraction > 0)
      spdlog::info("[data] valid split: {} of {} documents, {:.2f} % of the text (--valid-fraction {})", docs,
                   total_docs, 100.0 * share, o.valid_fraction);
    if (o.valid_fraction > 0 && share > 2 * o.valid_fraction)
      spdlog::warn("[data] every document is larger than --valid-fraction {} of the text: the smallest one was "
                   "held out, {:.2f} % of the text",
                   o.valid_fraction, 100.0 * share);
  }

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
                            {"formats", report.formats},
                            {"tokenizer_path", o.tokenizer_path},
                            {"valid_fraction", o.valid_fraction},
                            {"seed", o.seed}};
  data::PretrainDatasetWriter writer(o.output, info, created);
  const int32_t forbidden[] = {sp.pad, sp.cls, sp.sep, sp.mask};

  // Pass 2: tokenise and write, file by file, in batches of documents.
  int64_t doc_index = 0;
  for (size_t f = 0; f < o.inputs.size(); ++f) {
    const auto docs = read_corpus_text(fs::read_utf8_text_file(o.inputs[f]), parse_corpus_format(report.formats[f]));
    size_t d0 = 0;
    while (d0 < docs.size()) {
      // ~4 MB of text per batch keeps memory flat on large files
      size_t d1 = d0, bytes = 0;
      std::vector<std::string> sentences;
      while (d1 < docs.size() && (bytes < (4u << 20) || d1 == d0)) {
        for (const auto& s : docs[d1]) {
          bytes += s.size();
          sentences.push_back(s);
        }
        ++d1;
      }
      const auto ids = text::encode_batch(tok, sentences, o.threads);
      size_t s = 0;
      for (size_t d = d0; d < d1; ++d, ++doc_index) {
        data::DocumentTokens doc(docs[d].size());
        for (auto& st : doc) {
          st.ids = ids[s++];
          st.word_start.resize(st.ids.size());
          for (size_t i = 0; i < st.ids.size(); ++i) {
            for (int32_t bad : forbidden)
              if (bad >= 0 && st.ids[i] == bad) {
                st.ids[i] = sp.unk >= 0 ? sp.unk : st.ids[i];
                ++report.specials_replaced;
              }
            st.word_start[i] = tok.is_word_start(st.ids[i]) ? 1 : 0;
          }
          if (!st.ids.empty()) st.word_start[0] = 1;  // a sentence starts a word
        }
        writer.add_document(is_valid[doc_index] ? "valid" : "train", doc);
      }
      d0 = d1;
    }
  }
  copy_tokenizer_into_dataset(o.tokenizer_path, tok.type(), o.output);  // before finish(): the manifest hashes it
  report.header = writer.finish();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (report.specials_replaced > 0)
    spdlog::warn("[data] {} special-token ids in the text were replaced by unk", report.specials_replaced);
  return report;
}

}  // namespace tisa::prep
