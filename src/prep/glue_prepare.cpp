// GLUE TSV → tokenised splits with a content-hash cache (see glue_prepare.h).
#include "prep/glue_prepare.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "data/glue_dataset.h"
#include "data/glue_tsv.h"
#include "text/batch_encode.h"
#include "text/tokenizer.h"

namespace tisa::prep {
namespace {

namespace stdfs = std::filesystem;

struct Source {
  std::string split;   // name in the output ("train", "diagnostic", "input", ...)
  std::string task;    // task whose format the file has ("AX" for the diagnostic)
  std::string format;  // split format of that task to read it with ("" = detect, for --input)
  std::string path;
};

// Where the test-only set `task` (AX), predicted by `predictor`'s model (MNLI), may lie in a data
// folder: its own folder, its leaderboard name at the root or in the predictor's folder.
std::string find_predicted_set(const std::string& root, const data::GlueTask& task, const data::GlueTask& predictor) {
  const data::GlueSplitFormat& f = task.splits.front();
  const std::vector<stdfs::path> candidates = {stdfs::path(data::glue_tsv_path(root, task.name, f.name)),
                                               stdfs::path(root) / task.name / f.leaderboard,
                                               stdfs::path(root) / f.leaderboard,
                                               stdfs::path(root) / predictor.dir / f.leaderboard};
  for (const auto& c : candidates)
    if (stdfs::is_regular_file(c)) return c.string();
  return "";
}

std::vector<Source> find_sources(const GluePrepareOptions& opt, const data::GlueTask& task) {
  std::vector<Source> out;
  if (!opt.input.empty()) {
    if (!stdfs::is_regular_file(opt.input)) throw Error("--input " + opt.input + ": no such file");
    out.push_back({"input", task.name, "", opt.input});
    return out;
  }
  if (!stdfs::is_directory(opt.data_dir)) throw Error("--data-dir " + opt.data_dir + " is not a folder");
  std::string expected;
  for (const auto& f : task.splits) {
    const std::string path = data::glue_tsv_path(opt.data_dir, task.name, f.name);
    expected += (expected.empty() ? "" : ", ") + path;
    if (stdfs::is_regular_file(path)) out.push_back({f.name, task.name, f.name, path});
  }
  if (out.empty()) throw Error("no " + task.name + " files found (expected some of: " + expected + ")");
  for (const data::GlueTask* other : data::glue_tasks_predicted_by(task.name)) {  // MNLI: AX
    std::string path = find_predicted_set(opt.data_dir, *other, task);
    const std::string& split = other->splits.front().name;
    if (!path.empty()) out.push_back({split, other->name, split, path});
  }
  return out;
}

// Reads `src`; for --input, tries every format of the task (labelled ones first) and keeps the
// first that reads without error.
data::GlueSplitData read_source(const Source& src) {
  const data::GlueTask& task = data::find_glue_task(src.task);
  if (!src.format.empty()) return data::read_glue_tsv(task, src.format, src.path);
  std::string errors;
  std::vector<const data::GlueSplitFormat*> order;
  for (const auto& f : task.splits)
    if (f.label >= 0 && f.name != "train") order.push_back(&f);
  for (const auto& f : task.splits)
    if (f.name == "train") order.push_back(&f);
  for (const auto& f : task.splits)
    if (f.label < 0) order.push_back(&f);
  for (const auto* f : order) {
    try {
      auto data = data::read_glue_tsv(task, f->name, src.path);
      spdlog::info("[data] {}: read in the format of {} {} ({} examples)", src.path, task.name, f->name,
                   data.examples.size());
      return data;
    } catch (const Error& e) {
      errors += std::string("\n  as ") + f->name + ": " + e.what();
    }
  }
  throw Error(src.path + " is in none of the " + task.name + " formats:" + errors);
}

// A cached split is reused only when its file still has the size and content hash recorded when
// it was written: a damaged cache is rebuilt, not reused on every retry. `why` gets the reason.
bool split_file_intact(const stdfs::path& out_dir, const std::string& manifest_path, const std::string& split,
                       std::string* why) {
  const auto manifest = nlohmann::json::parse(fs::read_file(manifest_path), nullptr, /*allow_exceptions=*/false);
  const std::string file = (out_dir / (split + ".bin")).string();
  if (!manifest.is_object() || !manifest.contains("splits") || !manifest["splits"].contains(split)) {
    *why = manifest_path + " does not describe split " + split;
    return false;
  }
  const auto& entry = manifest["splits"][split];
  if (!entry.contains("hash") || !entry.contains("bytes")) {
    *why = manifest_path + " records no size and hash of " + file + " (written by an older version)";
    return false;
  }
  std::error_code ec;
  const auto bytes = stdfs::file_size(file, ec);
  if (ec || bytes != entry["bytes"].get<uintmax_t>() || fs::file_hash_hex(file) != entry["hash"].get<std::string>()) {
    *why = file + " is missing or damaged (size or content hash differs from " + manifest_path + ")";
    return false;
  }
  return true;
}

std::string tokenizer_options_text(const GluePrepareOptions& opt) {
  return opt.lowercase ? (*opt.lowercase ? "lowercase" : "cased") : "default-case";
}

// Cache key: everything that decides the bytes `prepare glue` writes (format version, task,
// tokenizer and its options, max length, each source's split, format and content hash).
std::string cache_key(const GluePrepareOptions& opt, const data::GlueTask& task, const text::Tokenizer& tokenizer,
                      const std::vector<Source>& sources, const std::vector<std::string>& hashes) {
  std::string key_text = "tisa-glue v" + std::to_string(data::kGlueSplitVersion) + "\n" + task.name + "\n" +
                         tokenizer.identity() + "\n" + tokenizer_options_text(opt) + "\n" +
                         std::to_string(opt.max_length) + "\n";
  for (size_t i = 0; i < sources.size(); ++i)
    key_text += sources[i].split + " " + sources[i].format + " " + hashes[i] + "\n";
  return fs::to_hex(fs::fnv1a64(key_text));
}

// True when opt.output already holds this exact preparation (same cache key, every split file
// intact); then fills report->splits. A damaged or foreign folder is prepared again (warned).
bool output_up_to_date(const GluePrepareOptions& opt, size_t num_sources, GluePrepareReport* report) {
  const stdfs::path out_dir(opt.output);
  const std::string manifest_path = (out_dir / data::kGlueManifestName).string();
  if (opt.force || !fs::exists(manifest_path)) return false;
  try {
    auto m = data::read_glue_manifest(opt.output);
    bool complete = m.cache_key == report->cache_key && m.splits.size() == num_sources;
    std::string damaged;
    for (const auto& s : m.splits)
      if (complete && !split_file_intact(out_dir, manifest_path, s, &damaged)) complete = false;
    if (!damaged.empty()) spdlog::warn("[data] cached {}; preparing again", damaged);
    if (!complete) return false;
    for (size_t i = 0; i < m.splits.size(); ++i) report->splits.emplace_back(m.splits[i], m.examples[i]);
    return true;
  } catch (const Error& e) {
    spdlog::warn("[data] {}: {}; preparing again", manifest_path, e.what());
    return false;
  }
}

// One source file tokenised: [CLS] a [SEP] (b [SEP]) per example, cut to opt.max_length (the
// tokenizer's pair rule); labels as floats (class id or STS-B score; NaN when unlabelled).
// *truncated counts the examples that did not fit.
data::GlueEncodedSplit encode_split(const Source& src, const data::GlueSplitData& tsv, const data::GlueTask& task,
                                    const text::Tokenizer& tokenizer, const GluePrepareOptions& opt,
                                    int64_t* truncated) {
  const data::GlueTask& src_task = data::find_glue_task(src.task);
  const auto& format = src_task.split(tsv.split);
  const bool pair = format.text_b >= 0;
  std::vector<std::string> a, b;
  a.reserve(tsv.examples.size());
  for (const auto& ex : tsv.examples) {
    a.push_back(ex.text_a);
    if (pair) b.push_back(ex.text_b);
  }
  auto ids_a = text::encode_batch(tokenizer, a, opt.threads);
  std::vector<std::vector<int32_t>> ids_b;
  if (pair) ids_b = text::encode_batch(tokenizer, b, opt.threads);

  data::GlueEncodedSplit out;
  out.task = task.name;
  out.split = src.split;
  out.tokenizer_identity = tokenizer.identity();
  out.max_length = opt.max_length;
  out.regression = src_task.regression;
  out.has_labels = format.label >= 0;
  *truncated = 0;
  for (size_t i = 0; i < tsv.examples.size(); ++i) {
    const auto& ex = tsv.examples[i];
    const size_t full = ids_a[i].size() + (pair ? ids_b[i].size() + 3 : 2);
    if (static_cast<int64_t>(full) > opt.max_length) ++*truncated;
    text::PairEncoding enc = pair ? tokenizer.build_pair(std::move(ids_a[i]), std::move(ids_b[i]), opt.max_length)
                                  : tokenizer.build_single(std::move(ids_a[i]), opt.max_length);
    float label = std::nanf("");
    if (out.has_labels) label = src_task.regression ? static_cast<float>(ex.score) : static_cast<float>(ex.label);
    out.add(enc.input_ids, enc.token_type_ids, label, ex.index, ex.line);
  }
  return out;
}

// Writes <split>.bin and returns its manifest record: file, size and hash (checked when the
// cache is reused), counts, the source file and its hash.
nlohmann::json write_split(const stdfs::path& out_dir, const Source& src, const std::string& source_hash,
                           const data::GlueSplitData& tsv, const data::GlueEncodedSplit& out, int64_t truncated) {
  const std::string file = src.split + ".bin";
  data::write_glue_split((out_dir / file).string(), out);
  return {{"file", file},
          {"bytes", stdfs::file_size(out_dir / file)},
          {"hash", fs::file_hash_hex((out_dir / file).string())},
          {"examples", out.size()},
          {"tokens", out.input_ids.size()},
          {"has_labels", out.has_labels},
          {"format", tsv.split},
          {"source", src.path},
          {"source_hash", source_hash},
          {"truncated", truncated},
          {"skipped_rows", tsv.stats.skipped_short_rows}};
}

// The manifest (data/glue_dataset.h reads it): format, task, cache key, labels, tokenizer, and
// the record of each split in `split_order`.
nlohmann::json make_manifest(const GluePrepareOptions& opt, const data::GlueTask& task, const text::Tokenizer& tokenizer,
                             const std::string& key, const nlohmann::json& order, const nlohmann::json& splits) {
  const text::SpecialIds& special = tokenizer.special_ids();
  return {{"format", "tisa-glue"},
          {"version", data::kGlueSplitVersion},
          {"task", task.name},
          {"cache_key", key},
          {"max_length", opt.max_length},
          {"labels", task.labels},
          {"regression", task.regression},
          {"tokenizer",
           {{"identity", tokenizer.identity()},
            {"type", tokenizer.type()},
            {"path", opt.tokenizer},
            {"options", tokenizer_options_text(opt)},
            {"vocab_size", tokenizer.vocab_size()},
            {"pad", special.pad >= 0 ? special.pad : 0},
            {"cls", special.cls},
            {"sep", special.sep}}},
          {"split_order", order},
          {"splits", splits}};
}

}  // namespace

GluePrepareReport prepare_glue(const GluePrepareOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const data::GlueTask& task = data::find_glue_task(opt.task);
  if (!task.predicted_by.empty())  // AX: test-only, prepared with the task whose model predicts it
    throw Error(task.name + " is prepared with " + task.predicted_by + " (its " + task.splits.front().name +
                " split); use --task " + task.predicted_by);
  if (opt.max_length < 3) throw Error("--max-length must be at least 3, got " + std::to_string(opt.max_length));
  if (opt.output.empty()) throw Error("--output is required");
  const auto sources = find_sources(opt, task);
  text::TokenizerOptions topt;
  topt.lowercase = opt.lowercase;
  auto tokenizer = text::load_tokenizer(opt.tokenizer, topt);

  // Nothing to do when the output holds the same preparation (the cache key covers every input).
  std::vector<std::string> hashes;
  for (const auto& s : sources) hashes.push_back(fs::file_hash_hex(s.path));
  GluePrepareReport report;
  report.cache_key = cache_key(opt, task, *tokenizer, sources, hashes);
  if (output_up_to_date(opt, sources.size(), &report)) {
    report.cached = true;
    spdlog::info("[data] {} in {} is up to date (cache key {}); nothing to do", task.name, opt.output, report.cache_key);
    return report;
  }

  // Each source → <split>.bin, recorded (size, hash, counts) in the manifest written last.
  fs::create_directories(opt.output);
  const stdfs::path out_dir(opt.output);
  nlohmann::json splits_json = nlohmann::json::object();
  nlohmann::json order = nlohmann::json::array();
  for (size_t si = 0; si < sources.size(); ++si) {
    const Source& src = sources[si];
    const data::GlueSplitData tsv = read_source(src);
    int64_t truncated = 0;
    const data::GlueEncodedSplit out = encode_split(src, tsv, task, *tokenizer, opt, &truncated);
    splits_json[src.split] = write_split(out_dir, src, hashes[si], tsv, out, truncated);
    order.push_back(src.split);
    report.splits.emplace_back(src.split, static_cast<int64_t>(out.size()));
    spdlog::info("[data] {} {}: {} examples, {} tokens ({:.1f}/example), {} truncated to {}{}", task.name, src.split,
                 out.size(), out.input_ids.size(),
                 out.size() ? static_cast<double>(out.input_ids.size()) / static_cast<double>(out.size()) : 0.0,
                 truncated, opt.max_length,
                 tsv.stats.skipped_short_rows ? ", " + std::to_string(tsv.stats.skipped_short_rows) + " short rows skipped"
                                              : std::string());
  }
  const nlohmann::json manifest = make_manifest(opt, task, *tokenizer, report.cache_key, order, splits_json);
  fs::write_file_atomic((out_dir / data::kGlueManifestName).string(), manifest.dump(2) + "\n");
  spdlog::info("[data] {} prepared in {} ({:.1f}s)", task.name, opt.output,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return report;
}

}  // namespace tisa::prep
