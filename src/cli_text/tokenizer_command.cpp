// `tisa-train tokenizer {train,encode,export-hf,bench}` (SPEC §6): train a SentencePiece or
// WordPiece tokenizer, encode a text file into JSONL (the form the golden checks and other tools
// read), write a tokenizer as a Hugging Face tokenizer directory, and measure tokenisation
// throughput on one thread and on all threads.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/output_guard.h"
#include "cli_text/commands.h"
#include "common/cli_checks.h"
#include "common/error.h"
#include "common/fs.h"
#include "text/batch_encode.h"
#include "text/hf_tokenizer_files.h"
#include "text/tokenizer.h"
#include "text/tokenizer_trainer.h"

namespace tisa::cli {
namespace {

// Lines of a file split on "\n" only; the "\n" is dropped, nothing else (a "\r" stays in the text).
// A final line without "\n" counts; a file ending in "\n" has no extra empty line.
std::vector<std::string> read_lines_lf(const std::string& path) {
  const std::string data = fs::read_file(path);
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t end = data.find('\n', pos);
    if (end == std::string::npos) end = data.size();
    lines.emplace_back(data, pos, end - pos);
    pos = end + 1;
  }
  return lines;
}

void append_json_string(std::string& out, const std::string& s) {
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(char(c));
        }
    }
  }
  out.push_back('"');
}

void append_ids(std::string& out, const std::vector<int32_t>& ids) {
  out.push_back('[');
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out.push_back(',');
    out += std::to_string(ids[i]);
  }
  out.push_back(']');
}

struct CaseFlags {
  std::optional<bool> lowercase, keep_accents;
  void add_to(CLI::App* cmd) {
    cmd->add_flag_callback("--lowercase", [this] { lowercase = true; }, "lowercase the text (default: on, or the tokenizer directory's setting)");
    cmd->add_flag_callback("--no-lowercase", [this] { lowercase = false; }, "keep case (cased vocabularies)");
    cmd->add_flag_callback("--keep-accents", [this] { keep_accents = true; }, "do not strip accents");
  }
  text::TokenizerOptions options() const { return text::TokenizerOptions{lowercase, keep_accents}; }
};

void add_train(CLI::App* parent) {
  auto* cmd = parent->add_subcommand("train", "train a SentencePiece (ALBERT) or WordPiece (BERT) tokenizer");
  auto o = std::make_shared<text::TokenizerTrainOptions>();
  auto flags = std::make_shared<CaseFlags>();
  cmd->add_option("--type", o->type, "sentencepiece or wordpiece")->check(CLI::IsMember({"sentencepiece", "wordpiece"}));
  cmd->add_option("--input", o->inputs, "UTF-8 text files (BOM and CRLF are fine)")->required()->expected(1, -1);
  cmd->add_option("--vocab-size", o->vocab_size, "vocabulary size, special tokens included")
      ->check(integer_at_least(o->vocab_size, 1));
  cmd->add_option("--output", o->output_dir, "output directory (model/vocab + tisa_tokenizer.json)")->required();
  cmd->add_option("--threads", o->threads, "threads (0: all)")->check(integer_between(o->threads, 0, 1024));
  cmd->add_option("--max-sentences", o->max_sentences, "SentencePiece: sentences sampled for training")
      ->check(integer_at_least(o->max_sentences, 1));
  cmd->add_option("--min-frequency", o->min_frequency, "WordPiece: least count of a merged pair")
      ->check(integer_at_least(o->min_frequency, 1));
  cmd->add_option("--limit-alphabet", o->limit_alphabet, "WordPiece: most distinct characters kept");
  flags->add_to(cmd);
  cmd->callback([o, flags] {
    check_output_folder_holds_no_input("--output", o->output_dir, o->inputs);
    o->lowercase = flags->lowercase.value_or(true);
    o->keep_accents = flags->keep_accents.value_or(false);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string json = text::train_tokenizer(*o);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto tok = text::load_tokenizer(o->output_dir);
    spdlog::info("[tokenizer] wrote {} ({} tokens) in {:.1f} s", json, tok->vocab_size(), s);
  });
}

void add_export_hf(CLI::App* parent) {
  auto* cmd = parent->add_subcommand(
      "export-hf", "write a tokenizer as a Hugging Face directory: spiece.model or vocab.txt + tokenizer_config.json "
                   "+ special_tokens_map.json (AlbertTokenizer / BertTokenizer encode as ours)");
  struct Args {
    std::string tokenizer, output;
    int64_t max_length = 512;
    CaseFlags flags;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--tokenizer", a->tokenizer, "a .model, a vocab.txt or a tokenizer directory")->required();
  cmd->add_option("--output", a->output, "output directory (may be a model directory)")->required();
  cmd->add_option("--model-max-length", a->max_length, "model_max_length written to tokenizer_config.json");
  a->flags.add_to(cmd);
  cmd->callback([a] {
    namespace stdfs = std::filesystem;
    auto tok = text::load_tokenizer(a->tokenizer, a->flags.options());
    const bool spm = tok->type() == "sentencepiece";
    const std::string name = spm ? "spiece.model" : "vocab.txt";
    const stdfs::path src = stdfs::is_directory(a->tokenizer) ? stdfs::path(a->tokenizer) / name : stdfs::path(a->tokenizer);
    if (!stdfs::exists(src))
      throw Error("tokenizer export-hf: " + src.string() + " does not exist (a tokenizer directory must hold " + name + ")");
    fs::create_directories(a->output);
    const stdfs::path dst = stdfs::path(a->output) / name;
    if (!stdfs::exists(dst) || !stdfs::equivalent(src, dst)) fs::write_file_atomic(dst.string(), fs::read_file(src.string()));
    // The settings load_tokenizer resolved (flags, else tisa_tokenizer.json, else the defaults).
    text::HfTokenizerSettings settings{tok->type(), tok->lowercase(), tok->keep_accents(), a->max_length};
    text::write_hf_tokenizer_files(a->output, *tok, settings);
    spdlog::info("[tokenizer] wrote {}, tokenizer_config.json, special_tokens_map.json into {}", name, a->output);
  });
}

void add_encode(CLI::App* parent) {
  auto* cmd = parent->add_subcommand(
      "encode",
      "encode each line of a file into JSONL: {\"ids\",\"pieces\"} without special tokens, or with --pairs "
      "(TAB-separated a\\tb) {\"input_ids\",\"token_type_ids\"} with special tokens and truncation");
  struct Args {
    std::string tokenizer, input, output;
    bool pairs = false;
    int64_t max_length = 512;
    int threads = 0;
    CaseFlags flags;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--tokenizer", a->tokenizer, "a .model, a vocab.txt or a tokenizer directory")->required();
  cmd->add_option("--input", a->input, "text file, one text per line (split on \\n only)")->required();
  cmd->add_option("--output", a->output, "JSONL output file")->required();
  cmd->add_flag("--pairs", a->pairs, "lines are text_a<TAB>text_b; write model inputs (a line without TAB is a single text)");
  cmd->add_option("--max-length", a->max_length, "with --pairs: total length with special tokens")
      ->check(integer_at_least(a->max_length, 1));
  cmd->add_option("--threads", a->threads, "threads (0: all)")->check(integer_between(a->threads, 0, 1024));
  a->flags.add_to(cmd);
  cmd->callback([a] {
    check_output_is_not_input("--output", a->output, {a->input, a->tokenizer});
    auto tok = text::load_tokenizer(a->tokenizer, a->flags.options());
    const std::vector<std::string> lines = read_lines_lf(a->input);
    std::string out;
    out.reserve(lines.size() * 64);
    if (!a->pairs) {
      const auto ids = text::encode_batch(*tok, lines, a->threads);
      for (const auto& v : ids) {
        out += "{\"ids\":";
        append_ids(out, v);
        out += ",\"pieces\":[";
        for (size_t i = 0; i < v.size(); ++i) {
          if (i) out.push_back(',');
          append_json_string(out, tok->id_to_piece(v[i]));
        }
        out += "]}\n";
      }
    } else {
      std::vector<std::string> first(lines.size()), second(lines.size());
      std::vector<bool> has_pair(lines.size());
      for (size_t i = 0; i < lines.size(); ++i) {
        const size_t tab = lines[i].find('\t');
        has_pair[i] = tab != std::string::npos;
        first[i] = has_pair[i] ? lines[i].substr(0, tab) : lines[i];
        if (has_pair[i]) second[i] = lines[i].substr(tab + 1);
      }
      auto ida = text::encode_batch(*tok, first, a->threads);
      auto idb = text::encode_batch(*tok, second, a->threads);
      for (size_t i = 0; i < lines.size(); ++i) {
        const text::PairEncoding e = has_pair[i] ? tok->build_pair(std::move(ida[i]), std::move(idb[i]), a->max_length)
                                                 : tok->build_single(std::move(ida[i]), a->max_length);
        out += "{\"input_ids\":";
        append_ids(out, e.input_ids);
        out += ",\"token_type_ids\":";
        append_ids(out, e.token_type_ids);
        out += "}\n";
      }
    }
    fs::write_file_atomic(a->output, out);
    spdlog::info("[tokenizer] encoded {} lines with {} into {}", lines.size(), tok->identity(), a->output);
  });
}

struct Rate {
  double seconds = 0, mb_per_s = 0, tokens_per_s = 0;
};

void add_bench(CLI::App* parent) {
  auto* cmd = parent->add_subcommand("bench", "tokenisation throughput (MB/s, tokens/s) on one thread and on all threads");
  struct Args {
    std::string tokenizer;
    std::vector<std::string> inputs;
    int threads = 0;
    double min_seconds = 2.0;
    CaseFlags flags;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--tokenizer", a->tokenizer, "a .model, a vocab.txt or a tokenizer directory")->required();
  cmd->add_option("--input", a->inputs, "text files (lines; BOM/CRLF removed)")->required()->expected(1, -1);
  cmd->add_option("--threads", a->threads, "threads of the parallel run (0: all)")
      ->check(integer_between(a->threads, 0, 1024));
  cmd->add_option("--min-seconds", a->min_seconds, "repeat each measurement until it took this long")
      ->check(positive_number());
  a->flags.add_to(cmd);
  cmd->callback([a] {
    auto tok = text::load_tokenizer(a->tokenizer, a->flags.options());
    const std::vector<std::string> lines = text::read_text_lines(a->inputs);
    size_t bytes = 0;
    for (const auto& l : lines) bytes += l.size();
    size_t tokens = 0;
    for (const auto& v : text::encode_batch(*tok, lines, 0)) tokens += v.size();  // warm-up + count
    auto measure = [&](int threads) {
      Rate r;
      int reps = 0;
      const auto t0 = std::chrono::steady_clock::now();
      do {
        if (threads == 1) {
          size_t sink = 0;
          for (const auto& l : lines) sink += tok->encode(l).size();
          if (sink != tokens) throw Error("bench: token count changed between runs");
        } else {
          (void)text::encode_batch(*tok, lines, threads);
        }
        ++reps;
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } while (r.seconds < a->min_seconds);
      r.seconds /= reps;
      r.mb_per_s = double(bytes) / 1e6 / r.seconds;
      r.tokens_per_s = double(tokens) / r.seconds;
      return r;
    };
    const int all = text::resolve_threads(a->threads);
    const Rate one = measure(1);
    const Rate many = measure(all);
    std::printf("tokenizer  %s (%s)\ninput      %zu lines, %.2f MB, %zu tokens\n\n", a->tokenizer.c_str(),
                tok->identity().c_str(), lines.size(), double(bytes) / 1e6, tokens);
    std::printf("%-8s %10s %12s %14s\n", "threads", "seconds", "MB/s", "tokens/s");
    std::printf("%-8d %10.3f %12.2f %14.0f\n", 1, one.seconds, one.mb_per_s, one.tokens_per_s);
    std::printf("%-8d %10.3f %12.2f %14.0f\n", all, many.seconds, many.mb_per_s, many.tokens_per_s);
    std::printf(
        "{\"tokenizer\":\"%s\",\"type\":\"%s\",\"lines\":%zu,\"bytes\":%zu,\"tokens\":%zu,"
        "\"threads_1\":{\"seconds\":%.4f,\"mb_per_s\":%.3f,\"tokens_per_s\":%.0f},"
        "\"threads_%d\":{\"seconds\":%.4f,\"mb_per_s\":%.3f,\"tokens_per_s\":%.0f}}\n",
        tok->identity().c_str(), tok->type().c_str(), lines.size(), bytes, tokens, one.seconds, one.mb_per_s,
        one.tokens_per_s, all, many.seconds, many.mb_per_s, many.tokens_per_s);
  });
}

}  // namespace

void add_tokenizer_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tokenizer", "train a tokenizer, encode text with one, write it for Hugging Face, or measure its speed");
  cmd->require_subcommand(1);
  add_train(cmd);
  add_encode(cmd);
  add_export_hf(cmd);
  add_bench(cmd);
}

}  // namespace tisa::cli
