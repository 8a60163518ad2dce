// Outputs never replace inputs (issue 18, class 3): an output path that resolves to an input,
// directly, through "..", a symbolic link to the file or its folder, or a hard link, is refused.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/fs.h"
#include "common/output_guard.h"
#include "support/expect_error.h"
#include "support/test_paths.h"

namespace {

namespace stdfs = std::filesystem;
using tisa::check_output_is_not_input;
using tisa::test::error_of;

TEST(OutputGuard, OutputResolvingToAnInputIsRefused) {
  const std::string dir = tisa::test::make_temp_dir("guard");
  const std::string in = dir + "/model/model.safetensors";
  tisa::fs::create_directories(dir + "/model");
  tisa::fs::write_file_atomic(in, "weights");
  const std::vector<std::string> inputs = {dir + "/other.tsv", in};

  EXPECT_HAS(error_of([&] { check_output_is_not_input("--output", in, inputs); }),
             "--output " + in + " is the same file as " + in + ", an input of this command");
  EXPECT_HAS(error_of([&] { check_output_is_not_input("--output", dir + "/model/../model/model.safetensors", inputs); }),
             "is the same file as");
  stdfs::create_directory_symlink(dir + "/model", dir + "/link_dir");
  EXPECT_HAS(error_of([&] { check_output_is_not_input("--output", dir + "/link_dir/model.safetensors", inputs); }),
             "is the same file as");
  stdfs::create_symlink(in, dir + "/link_file");
  EXPECT_HAS(error_of([&] { check_output_is_not_input("--output", dir + "/link_file", inputs); }), "is the same file as");
  stdfs::create_hard_link(in, dir + "/hard");
  EXPECT_HAS(error_of([&] { check_output_is_not_input("--output", dir + "/hard", inputs); }), "is the same file as");
  EXPECT_EQ(tisa::test::slurp(in), "weights");

  // Other paths are fine, existing or not; missing inputs are not this check's business.
  check_output_is_not_input("--output", dir + "/model/out.safetensors", inputs);
  tisa::fs::write_file_atomic(dir + "/old_out", "x");
  check_output_is_not_input("--output", dir + "/old_out", inputs);
  check_output_is_not_input("--output", "-", inputs);
}

TEST(OutputGuard, ModelFolderInputsAreItsFiles) {
  const std::string dir = tisa::test::make_temp_dir("guard");
  for (const char* f : {"config.json", "model.safetensors", "spiece.model", "eval_results.json"})
    tisa::fs::write_file_atomic(dir + "/" + f, "x");
  const auto files = tisa::model_folder_inputs(dir);
  EXPECT_EQ(files, (std::vector<std::string>{dir + "/config.json", dir + "/model.safetensors", dir + "/spiece.model"}));
}

TEST(OutputGuard, OutputFolderHoldingAnInputIsRefused) {
  const std::string dir = tisa::test::make_temp_dir("guard_folder");
  tisa::fs::create_directories(dir + "/data/sub");
  const std::string corpus = dir + "/data/sub/corpus.txt";
  tisa::fs::write_file_atomic(corpus, "text");
  const std::vector<std::string> inputs = {corpus};
  using tisa::check_output_folder_holds_no_input;
  // The folder itself, a parent at any depth, and the same through a link: refused.
  EXPECT_HAS(error_of([&] { check_output_folder_holds_no_input("--output", dir + "/data/sub", inputs); }),
             "holds " + corpus + ", an input of this command");
  EXPECT_HAS(error_of([&] { check_output_folder_holds_no_input("--output", dir + "/data", inputs); }), "holds");
  stdfs::create_directory_symlink(dir + "/data", dir + "/link");
  EXPECT_HAS(error_of([&] { check_output_folder_holds_no_input("--output", dir + "/link", inputs); }), "holds");
  // A folder whose name only starts like the input's, a sibling, a new folder: fine.
  tisa::fs::create_directories(dir + "/data/su");
  check_output_folder_holds_no_input("--output", dir + "/data/su", inputs);
  check_output_folder_holds_no_input("--output", dir + "/data/sub/out", inputs);
  check_output_folder_holds_no_input("--output", dir + "/new", inputs);
}

}  // namespace
