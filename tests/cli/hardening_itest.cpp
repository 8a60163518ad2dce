// Issue 18 from the command line, as a user meets it (exit codes and the one sentence printed):
//   class 3  an output that resolves to an input (model.safetensors through a linked folder, the
//            --input of predict through a hard link) is refused, the input left intact;
//   class 4  eval/predict on a model without a trained classifier head are refused;
//   class 7  out-of-range model forward inputs are one sentence naming the tensor;
//   class 8  non-positive sizes and shapes are usage errors (exit 2);
// and issue 36's message classes (HardeningMessages, one probe per row).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>

#include "common/fs.h"
#include "io/safetensors.h"
#include "support/expect_error.h"
#include "support/test_paths.h"

namespace {

namespace stdfs = std::filesystem;
using tisa::test::bin_dir;
using tisa::test::make_temp_dir;
using tisa::test::run;
using tisa::test::shared_path;
using tisa::test::slurp;

constexpr const char* kPretraining = "golden/hf_albert/pretraining_absolute";

// A private copy of a golden model folder (tests must never risk the shared one).
std::string copy_model(const std::string& golden, const std::string& tmp) {
  const std::string dir = tmp + "/model";
  stdfs::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors", "inputs.safetensors"})
    stdfs::copy_file(shared_path(std::string(golden) + "/" + f), dir + "/" + f);
  return dir;
}

// Runs the front with `args`; stderr into tmp/err.txt. Returns the exit code.
int tisa_train(const std::string& args, const std::string& tmp) {
  return run(bin_dir() + "/tisa-train " + args + " >/dev/null 2>" + tmp + "/err.txt");
}

TEST(HardeningCli, OutputsNeverReplaceInputs) {
  TISA_REQUIRE_SHARED(std::string(kPretraining) + "/model.safetensors");
  const std::string tmp = make_temp_dir("harden_out");
  const std::string model = copy_model(kPretraining, tmp);
  const std::string weights = slurp(model + "/model.safetensors");
  stdfs::create_directory_symlink(model, tmp + "/alias");
  EXPECT_EQ(tisa_train("model forward --model " + model + " --inputs " + model + "/inputs.safetensors --output " + tmp +
                           "/alias/model.safetensors",
                       tmp),
            1);
  EXPECT_HAS(slurp(tmp + "/err.txt"), "--output " + tmp + "/alias/model.safetensors is the same file as " + model +
                                          "/model.safetensors, an input of this command");
  EXPECT_EQ(slurp(model + "/model.safetensors"), weights);

  tisa::fs::write_file_atomic(tmp + "/in.tsv", "sentence\tlabel\ngood\t1\n");
  stdfs::create_hard_link(tmp + "/in.tsv", tmp + "/out.tsv");
  EXPECT_EQ(tisa_train("predict --model " + model + " --task SST-2 --input " + tmp + "/in.tsv --output " + tmp +
                           "/out.tsv",
                       tmp),
            1);
  EXPECT_HAS(slurp(tmp + "/err.txt"), "is the same file as " + tmp + "/in.tsv");
  EXPECT_EQ(slurp(tmp + "/in.tsv"), "sentence\tlabel\ngood\t1\n");
}

TEST(HardeningCli, NoSilentRandomClassifierHead) {
  TISA_REQUIRE_SHARED(std::string(kPretraining) + "/model.safetensors");
  const std::string tmp = make_temp_dir("harden_head");
  const std::string model = copy_model(kPretraining, tmp);  // a pretraining model: no classifier head
  tisa::fs::write_file_atomic(tmp + "/in.tsv", "sentence\tlabel\ngood\t1\n");
  EXPECT_EQ(tisa_train("predict --model " + model + " --task SST-2 --input " + tmp + "/in.tsv --output " + tmp +
                           "/pred.tsv",
                       tmp),
            1);
  EXPECT_HAS(slurp(tmp + "/err.txt"), model + " holds no trained classifier head");
  EXPECT_FALSE(stdfs::exists(tmp + "/pred.tsv"));
  EXPECT_EQ(tisa_train("eval --model " + model + " --task SST-2 --data-dir " + tisa::test::source_dir() +
                           "/data/sample/glue",
                       tmp),
            1);
  EXPECT_HAS(slurp(tmp + "/err.txt"), "holds no trained classifier head");
  EXPECT_FALSE(stdfs::exists(model + "/eval_results.json"));
}

// I64 tensor [1, n] for the torch-free writer.
tisa::io::RawTensor i64_row(const std::vector<int64_t>& values) {
  tisa::io::RawTensor t;
  t.dtype = tisa::io::DType::kI64;
  t.shape = {1, static_cast<int64_t>(values.size())};
  t.data.resize(values.size() * 8);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

TEST(HardeningCli, ForwardInputsOutOfRangeNameTheTensor) {
  TISA_REQUIRE_SHARED(std::string(kPretraining) + "/model.safetensors");
  const std::string tmp = make_temp_dir("harden_fwd");
  const std::string model = copy_model(kPretraining, tmp);  // vocab 100, 64 positions, 2 token types
  auto write_inputs = [&](std::vector<int64_t> ids, std::vector<int64_t> types) {
    tisa::io::SafeTensors st;
    st.tensors["input_ids"] = i64_row(ids);
    st.tensors["token_type_ids"] = i64_row(types);
    st.tensors["attention_mask"] = i64_row(std::vector<int64_t>(ids.size(), 1));
    tisa::io::write_safetensors(tmp + "/in.safetensors", st);
  };
  const std::string cmd = "model forward --model " + model + " --inputs " + tmp + "/in.safetensors --output " + tmp +
                          "/out.safetensors";
  write_inputs({2, 5, 100, 3}, {0, 0, 0, 0});
  EXPECT_EQ(tisa_train(cmd, tmp), 1);
  EXPECT_HAS(slurp(tmp + "/err.txt"), "input_ids holds values from 2 to 100, expected token ids of the model's "
                                      "vocabulary in [0, 100)");
  write_inputs({2, 5, 6, 3}, {0, 0, 2, 0});
  EXPECT_EQ(tisa_train(cmd, tmp), 1);
  EXPECT_HAS(slurp(tmp + "/err.txt"), "token_type_ids holds values from 0 to 2, expected token types in [0, 2)");
  write_inputs(std::vector<int64_t>(65, 5), std::vector<int64_t>(65, 0));
  EXPECT_EQ(tisa_train(cmd, tmp), 1);
  EXPECT_HAS(slurp(tmp + "/err.txt"), "input_ids has 65 positions but the model has 64");
  EXPECT_EQ(slurp(tmp + "/err.txt").find("Exception raised from"), std::string::npos);
  EXPECT_FALSE(stdfs::exists(tmp + "/out.safetensors"));
}

TEST(HardeningCli, NonPositiveSizesAreUsageErrors) {
  const std::string tmp = make_temp_dir("harden_cli");
  EXPECT_EQ(tisa_train("predict --model x --input y --output z --batch-size 0", tmp), 2);
  EXPECT_EQ(tisa_train("eval --model x --data-dir y --max-length -3", tmp), 2);
  EXPECT_EQ(tisa_train("bench --shape 0x128", tmp), 2);
  EXPECT_HAS(slurp(tmp + "/err.txt"), "0x128");
  EXPECT_EQ(tisa_train("bench --shape 8x128 --threads -4", tmp), 2);
  EXPECT_EQ(tisa_train("prepare pretrain --input a --tokenizer b --output c --threads -4", tmp), 2);
  EXPECT_EQ(tisa_train("tokenizer train --type sentencepiece --input a --vocab-size 0 --output o", tmp), 2);
}

// Issue 36, point 4: each class of unclear message, as a table of probes. Each is refused (exit 1
// for a refused run, 2 for a usage error) with one sentence that names the key, file or value and
// what was expected, and never with a LibTorch stack ("Exception raised from", "alloc_cpu").
struct MessageProbe {
  const char* name;
  std::string args;
  int rc;
  std::string says;
};

// gtest prints a struct parameter as raw bytes; the probe's name instead.
void PrintTo(const MessageProbe& p, std::ostream* os) { *os << p.name; }

std::string message_probe_name(const testing::TestParamInfo<MessageProbe>& info) { return info.param.name; }

class HardeningMessages : public testing::TestWithParam<MessageProbe> {};

// Folders and files the probes refer to, under one temporary folder.
const std::string& probe_dir() {
  static const std::string dir = [] {
    const std::string d = make_temp_dir("harden_messages");
    auto model = [&](const std::string& name, const std::string& json) {
      stdfs::create_directories(d + "/" + name);
      tisa::fs::write_file_atomic(d + "/" + name + "/config.json", json);
    };
    model("no_hidden", R"({"model_type": "albert", "num_attention_heads": 4})");
    model("no_heads", R"({"model_type": "albert", "hidden_size": 64})");
    model("negative", R"({"model_type": "albert", "hidden_size": -768, "num_attention_heads": 12})");
    model("zero_heads", R"({"model_type": "albert", "hidden_size": 64, "num_attention_heads": 0})");
    model("classifier", R"({"model_type": "albert", "hidden_size": 64, "num_attention_heads": 4,
                            "architectures": ["AlbertForSequenceClassification"], "finetuning_task": "SST-2"})");
    tisa::fs::write_file_atomic(d + "/in.tsv", "sentence\tlabel\ngood\t1\n");
    tisa::fs::write_file_atomic(d + "/inputs.safetensors", "");
    stdfs::create_directories(d + "/out_dir");
    // A reproduction whose tisa pretraining never finished; a run folder of someone else's files.
    stdfs::create_directories(d + "/repro/pretrain/tisa/checkpoints");
    stdfs::create_directories(d + "/foreign_run");
    tisa::fs::write_file_atomic(d + "/foreign_run/notes.txt", "mine");
    return d;
  }();
  return dir;
}

TEST_P(HardeningMessages, OneSentenceNamingWhatWasExpected) {
  const MessageProbe& p = GetParam();
  const std::string tmp = probe_dir();
  std::string args = p.args;
  for (size_t at; (at = args.find("$D")) != std::string::npos;) args.replace(at, 2, tmp);
  std::string says = p.says;
  for (size_t at; (at = says.find("$D")) != std::string::npos;) says.replace(at, 2, tmp);
  EXPECT_EQ(tisa_train(args, tmp), p.rc) << args << "\n" << slurp(tmp + "/err.txt");
  const std::string err = slurp(tmp + "/err.txt");
  EXPECT_HAS(err, says);
  EXPECT_EQ(err.find("Exception raised from"), std::string::npos) << err;
  EXPECT_EQ(err.find("alloc_cpu"), std::string::npos) << err;
  EXPECT_EQ(err.find("179769313486231570814527"), std::string::npos) << err;  // CLI11's double bound
}

const std::string kForwardFiles = " --inputs $D/inputs.safetensors --output $D/o";
const std::string kTiny = tisa::test::source_dir() + "/configs/pretrain/tiny.yaml";

INSTANTIATE_TEST_SUITE_P(
    Issue36, HardeningMessages,
    testing::Values(
        // unknown subcommand names
        MessageProbe{"UnknownModelSubcommand", "model forwad", 2,
                     "model: unknown subcommand 'forwad' (expected one of: forward, summary, schemes, variants)"},
        MessageProbe{"UnknownPrepareSubcommand", "prepare pretrian", 2,
                     "prepare: unknown subcommand 'pretrian' (expected one of: pretrain, combine, glue)"},
        // integer options given text, negatives or values no variable holds
        MessageProbe{"IntegerOptionGivenText", "eval --model x --data-dir y --batch-size abc", 2,
                     "--batch-size: expected an integer >= 1, got 'abc'"},
        MessageProbe{"IntegerOptionNegative", "eval --model x --data-dir y --max-length -3", 2,
                     "--max-length: expected an integer >= 0, got '-3'"},
        MessageProbe{"IntegerOptionOverflow",
                     "predict --model x --input y --output z --batch-size 99999999999999999999", 2,
                     "--batch-size: expected an integer >= 1, got '99999999999999999999'"},
        MessageProbe{"ThreadsOutOfRange", "prepare glue --task SST-2 --data-dir a --tokenizer b --output c --threads x",
                     2, "--threads: expected an integer in [0, 1024], got 'x'"},
        // --device
        MessageProbe{"DeviceTpu", "eval-mlm --model x --dataset y --device tpu", 2,
                     "--device: expected cpu or cuda, got 'tpu'"},
        // HF config.json without the sizes the weights' shapes depend on, or with impossible ones
        MessageProbe{"ConfigWithoutHiddenSize", "model forward --model $D/no_hidden" + kForwardFiles,
                     1, "$D/no_hidden/config.json: hidden_size is missing"},
        MessageProbe{"ConfigWithoutHeads", "model forward --model $D/no_heads" + kForwardFiles,
                     1, "$D/no_heads/config.json: num_attention_heads is missing"},
        MessageProbe{"ConfigNegativeSize", "model forward --model $D/negative" + kForwardFiles,
                     1, "$D/negative/config.json: hidden_size must be >= 1, got -768"},
        MessageProbe{"ConfigZeroHeads", "model forward --model $D/zero_heads" + kForwardFiles,
                     1, "$D/zero_heads/config.json: num_attention_heads must be >= 1, got 0"},
        // allocation-sized settings, bounded before anything is allocated
        MessageProbe{"T5BucketsHuge",
                     "model summary --config " + kTiny +
                         " --set model.position.relative=t5 --set model.position.t5.num_buckets=100000000000"
                         " --set model.position.t5.max_distance=1000000000000",
                     1, "model.position.t5.num_buckets: must be <= 65536"},
        MessageProbe{"ShawDistanceHuge",
                     "model summary --config " + kTiny +
                         " --set model.position.relative=shaw --set model.position.shaw.max_distance=4000000000000",
                     1, "model.position.shaw.max_distance: must be <= 65536"},
        // predict --output names a folder: refused before the model is loaded
        MessageProbe{"PredictOutputIsAFolder",
                     "predict --model $D/classifier --task SST-2 --input $D/in.tsv --output $D/out_dir", 1,
                     "--output $D/out_dir is a folder; expected the path of the predictions file"},
        // report on a half-finished reproduction: the table is written, the exit code says so
        MessageProbe{"ReportOfAHalfFinishedReproduction", "report --dir $D/repro --out $D/repro/results.md", 1,
                     "pretrain/tisa has no final model (unfinished)"},
        // a --run-dir that holds only files no run wrote: not "--resume", not "--overwrite"
        MessageProbe{"RunDirOfForeignFiles", "pretrain --config " + kTiny + " --run-dir $D/foreign_run", 1,
                     "$D/foreign_run holds files that no tisa-train run wrote (notes.txt); choose another --run-dir"}),
    message_probe_name);

}  // namespace
