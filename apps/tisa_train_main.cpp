// tisa-train — the one command users type.
//
// A light front (no LibTorch, no SentencePiece) that hands each subcommand to the executable that
// implements it, installed beside it: text processing to `tisa-text`, everything that touches a
// model to `tisa-nn`. Two reasons (README, "How data flows"): Debian's libsentencepiece and
// libtorch carry incompatible protobuf copies and crash when loaded into one process, and libgomp
// reads OMP_WAIT_POLICY when it is loaded — before main() — so the LibTorch process must be
// started with PASSIVE already set (busy-waiting OpenMP threads slow small ops by orders of
// magnitude on small VMs). The user's own setting wins.
//
// It also names OpenBLAS's kernel set. Debian's LibTorch 1.13 multiplies through the system
// OpenBLAS (0.3.21), whose CPU detection does not know recent Xeons (Sapphire Rapids) and falls back
// to its generic "Prescott" SSE3 kernels, several times slower than its AVX-512 ones
// (docs/perf/README.md, "Found and fixed by this comparison"). OPENBLAS_CORETYPE is read when OpenBLAS is loaded, so, like OMP_WAIT_POLICY, it is
// set here from the CPU's own feature flags (the newest kernel set whose instructions the CPU has),
// unless the user or the machine set it. LibTorch 2.x (MKL / oneDNN) ignores it.
//
// And it names ATen's own kernel set. Debian's LibTorch 1.13 picks its AVX2 kernels on a CPU with
// AVX-512, and the AVX-512 ones are faster (docs/perf/README.md, "ATen's kernel set and the GELU
// form"). ATEN_CPU_CAPABILITY
// is read at LibTorch's first operator, so it is set here, to avx512 where the CPU has the
// AVX-512 subsets ATen's AVX-512 kernels use (F, BW, DQ, VL) and FMA, unless the user set it.
// LibTorch 2.x picks AVX-512 by itself on such a CPU; the setting asks for the same.
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/subprocess.h"
#include "tisa_build_info.h"

namespace {

struct Subcommand {
  const char* name;
  const char* program;  // tisa-text or tisa-nn
  const char* summary;
};

// The subcommand table: one line per command. Keep in step with src/cli_text/ and src/cli_nn/.
constexpr Subcommand kSubcommands[] = {
    {"tokenizer", "tisa-text", "train, use, export or time a tokenizer (train, encode, export-hf, bench)"},
    {"prepare", "tisa-text", "tokenise a corpus or GLUE task into a binary dataset (pretrain, glue)"},
    {"pretrain", "tisa-nn", "pretrain ALBERT with MLM + SOP from a YAML config"},
    {"glue", "tisa-nn", "fine-tune and evaluate on GLUE tasks, write leaderboard files"},
    {"eval", "tisa-nn", "evaluate a fine-tuned model on a GLUE dev set"},
    {"eval-mlm", "tisa-nn", "MLM loss/accuracy of a pretrained model at several sequence lengths"},
    {"predict", "tisa-nn", "predict labels for a TSV of a GLUE task's format"},
    {"model", "tisa-nn", "run a model on inputs or summarise a config (forward, summary)"},
    {"analyze", "tisa-nn", "translation-invariance analysis of position embeddings (paper §3)"},
    {"plot", "tisa-nn", "draw loss/accuracy/invariance curves of runs"},
    {"report", "tisa-nn", "results table of a paper reproduction (scripts/reproduce_paper.sh)"},
    {"bench", "tisa-nn", "measure training/inference throughput, GEMM rate, data pipeline"},
    {"version", "tisa-nn", "print versions, the BLAS library in use and thread counts"},
};

void print_help() {
  std::printf(
      "tisa-train %s — ALBERT pretraining and GLUE fine-tuning with absolute, Shaw-relative and\n"
      "TISA position schemes.\n\n"
      "Usage: tisa-train <command> [options]   (tisa-train <command> --help for its options)\n\n"
      "Commands:\n",
      TISA_VERSION);
  for (const auto& c : kSubcommands) std::printf("  %-10s %s\n", c.name, c.summary);
  std::printf("\nEnvironment: OMP_WAIT_POLICY defaults to PASSIVE for the trainer process,\n"
              "OPENBLAS_CORETYPE to the OpenBLAS kernels this CPU's instruction sets allow (SKYLAKEX,\n"
              "HASWELL) and ATEN_CPU_CAPABILITY to avx512 on a CPU with AVX-512, where they are unset;\n"
              "set any of them yourself to override.\n");
}

// The AVX-512 subsets OpenBLAS's SkylakeX kernels need (F/CD/BW/DQ/VL); they include those of
// ATen's AVX-512 kernels (F/BW/DQ/VL).
bool cpu_has_skylakex_avx512() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

// The OpenBLAS kernel set for this CPU by its instruction sets: SkylakeX needs AVX-512 F/CD/BW/DQ/VL,
// Haswell AVX2 + FMA; anything older is left to OpenBLAS's own detection.
const char* openblas_coretype_for_this_cpu() {
  if (cpu_has_skylakex_avx512()) return "SKYLAKEX";
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "HASWELL";
#endif
  return nullptr;
}

// ATen's kernel set for this CPU (see the file comment): avx512 where the CPU has it, else ATen's
// own choice.
const char* aten_cpu_capability_for_this_cpu() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (cpu_has_skylakex_avx512() && __builtin_cpu_supports("fma")) return "avx512";
#endif
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    print_help();
    return argc < 2 ? tisa::kExitUsage : tisa::kExitOk;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("tisa-train %s\n", TISA_VERSION);
    return tisa::kExitOk;
  }
  const Subcommand* chosen = nullptr;
  for (const auto& c : kSubcommands)
    if (!std::strcmp(argv[1], c.name)) chosen = &c;
  if (!chosen) {
    std::fprintf(stderr, "tisa-train: unknown command '%s'. Known commands:", argv[1]);
    for (const auto& c : kSubcommands) std::fprintf(stderr, " %s", c.name);
    std::fprintf(stderr, "\n");
    return tisa::kExitUsage;
  }
  try {
    // The user's own OMP_WAIT_POLICY wins; otherwise PASSIVE (see the file comment).
    setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0);
    // OpenBLAS's kernels for this CPU unless already chosen (see the file comment).
    if (const char* coretype = openblas_coretype_for_this_cpu()) setenv("OPENBLAS_CORETYPE", coretype, 0);
    // ATen's AVX-512 kernels where the CPU has them, unless already chosen (see the file comment).
    if (const char* capability = aten_cpu_capability_for_this_cpu()) setenv("ATEN_CPU_CAPABILITY", capability, 0);
    // tcmalloc (tisa-nn's allocator where linked) prints a line for every allocation above 1 GB
    // by default; a large model's buffers are no news. The user's own setting wins.
    setenv("TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD", "1099511627776", 0);
    std::vector<std::string> child = {tisa::sibling_executable(chosen->program)};
    for (int i = 1; i < argc; ++i) child.emplace_back(argv[i]);
    tisa::exec_replace(child);
  } catch (const tisa::Error& e) {
    std::fprintf(stderr, "tisa-train: error: %s\n", e.what());
    return tisa::kExitError;
  }
}
