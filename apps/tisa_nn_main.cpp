// tisa-nn — everything that runs a model: pretraining, GLUE, evaluation, analysis, benchmarks.
// Never links SentencePiece: it reads the datasets that tisa-text writes (README, data flow).
// Users normally start it through `tisa-train`, which sets OMP_WAIT_POLICY before LibTorch loads.
#include "cli_main.h"
#include "common/allocator_tuning.h"
#include "cli_nn/commands.h"
#include "model/position/registry.h"
#include "train/runtime_info.h"

#ifdef TISA_HAVE_TCMALLOC
#include <gperftools/malloc_extension_c.h>
#include <gperftools/tcmalloc.h>

#include <string>
#endif

namespace {

// The allocator of this process: tcmalloc where the build linked it (its per-size free lists
// serve a training step's few hundred buffers again without page faults or glibc's bin
// consolidation: docs/perf/README.md, "tcmalloc as tisa-nn's allocator"), else glibc's malloc kept from returning
// freed memory to the kernel between steps (allocator_tuning.h).
void choose_allocator() {
#ifdef TISA_HAVE_TCMALLOC
  size_t allocated = 0;
  const bool in_use = MallocExtension_GetNumericProperty("generic.current_allocated_bytes", &allocated) && allocated > 0;
  tisa::set_allocator_description(std::string(tc_version(nullptr, nullptr, nullptr)) +
                                  (in_use ? "" : " (linked, but malloc does not reach it)"));
  if (in_use) return;
#endif
  switch (tisa::keep_freed_memory_for_reuse()) {
    case tisa::AllocatorTuning::kApplied: tisa::set_allocator_description("glibc malloc, freed memory kept for reuse"); break;
    case tisa::AllocatorTuning::kLeftToUser: tisa::set_allocator_description("glibc malloc, GLIBC_TUNABLES as given"); break;
    case tisa::AllocatorTuning::kUnsupported: tisa::set_allocator_description("the C library's malloc"); break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  choose_allocator();
  tisa::train::flush_denormals_to_zero();  // before any thread starts: they inherit it (runtime_info.h)
  tisa::model::install_position_schemes();  // the config learns the schemes and their settings
  return tisa::cli::run_cli_main("tisa-train", "tisa-train model tools", argc, argv, [](CLI::App& app) {
    tisa::cli::add_version_command(app);
    tisa::cli::add_glue_command(app);
    tisa::cli::add_eval_command(app);
    tisa::cli::add_predict_command(app);
    tisa::cli::add_analyze_command(app);
    tisa::cli::add_plot_command(app);
    tisa::cli::add_bench_command(app);
    tisa::cli::add_model_command(app);
    tisa::cli::add_pretrain_command(app);
    tisa::cli::add_eval_mlm_command(app);
    tisa::cli::add_report_command(app);
  });
}
