// TensorBoardRun's resume rule (issue 35): the events after a resume hold each (tag, step) of the
// kept metrics.jsonl records exactly once, also when a crash tore the record of a step that the
// checkpoint already covers. Read back with the same wire reader; tensorboard's own reader runs
// in tests/cli/tensorboard_itest.cpp.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/fs.h"
#include "io/tensorboard_events.h"
#include "io/tensorboard_writer.h"
#include "io/tf_record.h"
#include "support/test_paths.h"
#include "train/tensorboard_run.h"

namespace {

using namespace tisa;

// How often each step of `tag` occurs in the events files of `dir`.
std::map<int64_t, int> step_counts(const std::string& dir, const std::string& tag) {
  std::map<int64_t, int> out;
  for (const auto& file : io::TensorBoardWriter::event_files(dir)) {
    const std::string bytes = fs::read_file(file);
    for (auto record : io::scan_records(bytes).records) {
      const auto info = io::tensorboard::read_event_info(record);
      for (const auto& t : info.tags)
        if (t == tag) ++out[info.step];
    }
  }
  return out;
}

TEST(TensorBoardRun, ResumeRewritesAKeptStepThatACrashTore) {
  const std::string dir = test::make_temp_dir("tb_run") + "/tensorboard";
  train::TensorBoardRunInfo info;
  std::vector<MetricsRecord> history;
  {
    train::TensorBoardRun run(dir, info, -1);
    for (int64_t step = 1; step <= 3; ++step) {
      const nlohmann::json values = {{"loss", 1.0 / static_cast<double>(step)}};
      run.record("train", step, values);
      history.push_back({"train", step, values});
    }
  }
  const auto files = io::TensorBoardWriter::event_files(dir);
  ASSERT_EQ(files.size(), 1u);
  const std::string bytes = fs::read_file(files[0]);
  fs::write_file_atomic(files[0], bytes.substr(0, bytes.size() - 5));  // step 3's record torn
  EXPECT_EQ(step_counts(dir, "train/loss"), (std::map<int64_t, int>{{1, 1}, {2, 1}}));

  { train::TensorBoardRun resumed(dir, info, 3, history); }  // the checkpoint of step 3
  EXPECT_EQ(step_counts(dir, "train/loss"), (std::map<int64_t, int>{{1, 1}, {2, 1}, {3, 1}}));
  EXPECT_EQ(step_counts(dir, "config"), (std::map<int64_t, int>{{0, 1}})) << "the config text once";

  { train::TensorBoardRun again(dir, info, 3, history); }  // nothing lacking: nothing written twice
  EXPECT_EQ(step_counts(dir, "train/loss"), (std::map<int64_t, int>{{1, 1}, {2, 1}, {3, 1}}));
}

}  // namespace
