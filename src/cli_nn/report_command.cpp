// `tisa-train report`: the results table of a paper reproduction (src/report/paper_report.h),
//   tisa-train report --dir runs/paper-small --out runs/paper-small/results.md
//       --json runs/paper-small/results.json --meta scale=small --meta "machine=2 cores"   (one line)
// Reads pretrain/<variant>/, glue/<variant>/<TASK>/results.json and length/<variant>.json under
// --dir; missing parts show as "—", are listed in results.json's "incomplete", and make the
// command exit 1 after writing (unless --allow-incomplete). Prints the Markdown to stdout when
// --out is not given.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <sstream>

#include "cli_nn/commands.h"
#include "common/cli_checks.h"
#include "common/error.h"
#include "common/fs.h"
#include "report/paper_report.h"

namespace tisa::cli {
namespace {

struct ReportArgs {
  std::string dir, out_md, out_json, out_figure, out_pretraining_figure, variants, reference = "absolute", settings_from;
  int64_t resamples = 10000;
  std::vector<std::string> meta;
  bool allow_incomplete = false;
};

// The variants (in order), reference, resample count and meta of an earlier results.json.
void settings_from_results(const std::string& path, report::PaperReportOptions& o) {
  nlohmann::json prev;
  try {
    prev = nlohmann::json::parse(fs::read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  const auto need = [&](const char* key, bool ok, const char* what) {
    if (!prev.contains(key) || !ok) throw Error(path + ": key '" + key + "' must be " + what + " (a results.json of `tisa-train report`)");
  };
  need("variants", prev.contains("variants") && prev["variants"].is_array(), "an array of variants with names");
  for (const auto& v : prev["variants"]) {
    if (!v.is_object() || !v.contains("name") || !v["name"].is_string())
      throw Error(path + ": every entry of 'variants' needs a string 'name'");
    o.variants.push_back(v["name"].get<std::string>());
  }
  need("reference", prev.contains("reference") && prev["reference"].is_string(), "a string");
  o.reference = prev["reference"].get<std::string>();
  need("resamples", prev.contains("resamples") && prev["resamples"].is_number_integer(), "an integer");
  o.resamples = prev["resamples"].get<int64_t>();
  need("meta", prev.contains("meta") && prev["meta"].is_object(), "an object of strings");
  for (auto it = prev["meta"].begin(); it != prev["meta"].end(); ++it) {
    if (!it.value().is_string()) throw Error(path + ": meta." + it.key() + " must be a string");
    o.meta.emplace_back(it.key(), it.value().get<std::string>());
  }
}

void run_report(const ReportArgs& a) {
  report::PaperReportOptions o;
  o.dir = a.dir;
  if (!a.settings_from.empty()) settings_from_results(a.settings_from, o);
  std::stringstream ss(a.variants);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) o.variants.push_back(item);
  for (const auto& m : a.meta) {
    const auto eq = m.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--meta '" + m + "': expected KEY=VALUE (e.g. --meta scale=small)");
    o.meta.emplace_back(m.substr(0, eq), m.substr(eq + 1));
  }
  if (a.settings_from.empty()) {
    o.reference = a.reference;
    o.resamples = a.resamples;
  }
  const auto results = report::collect_paper_results(o);
  const std::string md = report::paper_results_markdown(results);
  if (!a.out_json.empty()) {
    fs::write_file_atomic(a.out_json, results.dump(2) + "\n");
    spdlog::info("[report] wrote {}", a.out_json);
  }
  if (!a.out_figure.empty()) {
    if (report::write_comparison_figure(results, a.out_figure))
      spdlog::info("[report] wrote {}", a.out_figure);
    else
      spdlog::warn("[report] no paired comparisons (no {} runs with dev predictions): {} not written", a.reference,
                   a.out_figure);
  }
  if (!a.out_pretraining_figure.empty()) {
    if (report::write_pretraining_figure(a.dir, results, a.out_pretraining_figure))
      spdlog::info("[report] wrote {}", a.out_pretraining_figure);
    else
      spdlog::warn("[report] no pretrain/<variant>/metrics.jsonl under {}: {} not written", a.dir,
                   a.out_pretraining_figure);
  }
  if (a.out_md.empty()) {
    std::fputs(md.c_str(), stdout);
  } else {
    fs::write_file_atomic(a.out_md, md);
    spdlog::info("[report] wrote {}", a.out_md);
  }
  bool has_reference = false;
  for (const auto& v : results["variants"]) has_reference = has_reference || v["name"] == a.reference;
  if (!has_reference)
    spdlog::warn("[report] the reference variant {} is not among the variants: no paired comparisons", a.reference);
  // A half-finished reproduction still gets its table (with "—"), but is not a success.
  std::string missing;
  for (const auto& item : results["incomplete"]) missing += "\n  " + item.get<std::string>();
  if (missing.empty()) return;
  if (a.allow_incomplete) {
    spdlog::warn("[report] {} is incomplete (--allow-incomplete):{}", a.dir, missing);
    return;
  }
  throw Error("report: the reproduction in " + a.dir + " is incomplete; the table shows — for:" + missing +
              "\nhint: finish it (scripts/reproduce_paper.sh resumes), or pass --allow-incomplete");
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "results table of a paper reproduction (scripts/reproduce_paper.sh)");
  cmd->add_option("--dir", a->dir, "reproduction folder (pretrain/, glue/, length/ inside)")->required();
  cmd->add_option("--out", a->out_md, "Markdown file to write (default: print)");
  cmd->add_option("--json", a->out_json, "JSON file to write");
  auto* variants =
      cmd->add_option("--variants", a->variants, "comma-separated variants in table order (default: all found)");
  cmd->add_option("--figure", a->out_figure, "SVG file: the paired differences from --reference per task");
  cmd->add_option("--pretraining-figure", a->out_pretraining_figure,
                  "SVG file: every variant's pretraining curves (loss, validation MLM/SOP accuracy, learning rate)");
  auto* reference = cmd->add_option("--reference", a->reference, "variant the others are compared with (paired bootstrap)")
                        ->capture_default_str();
  auto* resamples = cmd->add_option("--resamples", a->resamples, "bootstrap resamples and randomisation trials per comparison")
                        ->capture_default_str()
                        ->check(integer_between(a->resamples, 100, 1000000));
  auto* meta = cmd->add_option("--meta", a->meta, "KEY=VALUE shown above the table, e.g. scale=small (repeatable)");
  cmd->add_option("--settings-from", a->settings_from,
                  "take --variants, --reference, --resamples and --meta from this earlier results.json (regenerating "
                  "an archived reproduction's report)")
      ->excludes(variants)
      ->excludes(reference)
      ->excludes(resamples)
      ->excludes(meta);
  cmd->add_flag("--allow-incomplete", a->allow_incomplete,
                "exit 0 when variants, pretrainings or GLUE tasks are missing or unfinished (they show as —)");
  cmd->callback([a] { run_report(*a); });
}

}  // namespace tisa::cli
