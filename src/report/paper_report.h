// The results table of a paper reproduction (scripts/reproduce_paper.sh, `tisa-train report`):
// collects, for every compared position variant, the positional parameter count (SPEC §1, §2),
// the GLUE dev results over seeds (main metric per task and the per-seed average over tasks,
// median and sample std), the length-extrapolation rows (`tisa-train eval-mlm`) and the final
// pretraining validation numbers, and writes them as JSON and as a Markdown table.
//
// Layout read under the reproduction folder `dir` (written by the script):
//   pretrain/<variant>/final/config.json   the pretrained model (positional parameters, scheme)
//   pretrain/<variant>/config.yaml         fallback when final/ is missing (run not finished)
//   pretrain/<variant>/metrics.jsonl       last "eval" event = final pretraining validation
//   glue/<variant>/<TASK>/results.json     `tisa-train glue` per-task results (seeds, main metric)
//   length/<variant>.json                  `tisa-train eval-mlm --output`
//   glue/<variant>/<TASK>/seed-<s>/dev_predictions.json   the best model's dev predictions, for the
//                                          paired comparisons with the reference variant
// GLUE cells are the mean over seeds ± the half-width of its 95 % confidence interval (Student's
// t); "comparisons" holds, per task and variant, the paired bootstrap of the variant against the
// reference over dev examples (same seeds, so the same fine-tuning data order), with p-values
// Holm-adjusted over the whole table (metrics/significance.h).
// Anything missing is reported as missing ("—" in the table, absent keys in the JSON), so a
// partial run still gives a table.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tisa::report {

struct PaperReportOptions {
  std::string dir;                    // reproduction folder
  std::vector<std::string> variants;  // empty = pretrain/* sub-folders (position_variant_order)
  std::vector<std::pair<std::string, std::string>> meta;  // shown above the table (scale, command, machine)
  std::string reference = "absolute";  // the variant every other one is compared with (paired tests)
  int64_t resamples = 10000;           // bootstrap resamples (and randomisation trials) per paired comparison
};

// Median and sample standard deviation (n − 1; 0 for one value) of `values` (not empty).
struct SeedStats {
  double median = 0, std = 0, mean = 0;
  size_t n = 0;
};
SeedStats seed_stats(const std::vector<double>& values);

// Reads everything under options.dir; see the file comment for the JSON's content.
nlohmann::json collect_paper_results(const PaperReportOptions& options);

// The Markdown report of collect_paper_results().
std::string paper_results_markdown(const nlohmann::json& results);

// A forest plot of the paired comparisons (one panel per task, one row per variant: difference
// from the reference ×100 with its 95 % interval; significant rows in colour). Returns false
// (and writes nothing) when there are no comparisons.
bool write_comparison_figure(const nlohmann::json& results, const std::string& svg_path);

// The pretraining curves of the results' variants, in table order, from
// <dir>/pretrain/<variant>/metrics.jsonl: training loss and MLM loss (smoothed), validation MLM
// loss, MLM and SOP accuracy, learning rate; titled by meta "scale". Returns false (and writes
// nothing) when no variant has a metrics.jsonl.
bool write_pretraining_figure(const std::string& dir, const nlohmann::json& results, const std::string& svg_path);

}  // namespace tisa::report
