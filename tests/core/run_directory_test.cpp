// Run-directory ownership (issue 18, classes 1 and 2): one process per run directory, a stale
// lock after a crash is taken over, a fresh run never replaces an existing one without
// --overwrite (which deletes only what a run writes), default names never collide.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "common/fs.h"
#include "common/run_directory.h"
#include "support/expect_error.h"
#include "support/test_paths.h"

namespace {

using tisa::RunDirectory;
using tisa::test::error_of;
namespace stdfs = std::filesystem;

TEST(RunDirectory, OneOwnerAtATime) {
  const std::string dir = tisa::test::make_temp_dir("rundir") + "/run";
  {
    RunDirectory first(dir, RunDirectory::Start::kNew);
    EXPECT_TRUE(stdfs::is_directory(dir));
    // A second claim (another process, or the same one) is refused naming the owner.
    const std::string msg = error_of([&] { RunDirectory second(dir, RunDirectory::Start::kContinue); });
    EXPECT_HAS(msg, "run directory " + dir + " is in use by another tisa-train process (pid " +
                        std::to_string(::getpid()));
    EXPECT_HAS(msg, "choose another --run-dir");
  }
  RunDirectory again(dir, RunDirectory::Start::kContinue);  // released on destruction
}

TEST(RunDirectory, LockOfACrashedOwnerIsStaleAndTakenOver) {
  const std::string dir = tisa::test::make_temp_dir("rundir") + "/run";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto* leaked = new RunDirectory(dir, RunDirectory::Start::kNew);  // never destroyed: the process "crashes"
    (void)leaked;
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_HAS(tisa::test::slurp(dir + "/.lock"), "pid " + std::to_string(child));  // the dead owner's record
  RunDirectory taken(dir, RunDirectory::Start::kContinue);
  EXPECT_HAS(tisa::test::slurp(dir + "/.lock"), "pid " + std::to_string(::getpid()));
}

TEST(RunDirectory, MissingDirectoryToContinueIsNamed) {
  const std::string dir = tisa::test::make_temp_dir("rundir") + "/nope";
  EXPECT_HAS(error_of([&] { RunDirectory r(dir, RunDirectory::Start::kContinue); }),
             "run directory " + dir + " does not exist");
  EXPECT_FALSE(stdfs::exists(dir));
}

TEST(RunDirectory, FreshRunNeverReplacesAFinishedOne) {
  const std::string dir = tisa::test::make_temp_dir("rundir") + "/run";
  RunDirectory owner(dir, RunDirectory::Start::kNew);
  const auto& layout = tisa::pretraining_run_layout();
  owner.start_fresh("", layout, false);  // empty: fine
  tisa::fs::create_directories(dir + "/final");
  tisa::fs::write_file_atomic(dir + "/final/model.safetensors", "weights");
  tisa::fs::create_directories(dir + "/checkpoints/step-000002");
  tisa::fs::write_file_atomic(dir + "/metrics.jsonl", "{}\n");
  const std::string msg = error_of([&] { owner.start_fresh("", layout, false); });
  EXPECT_HAS(msg, dir + " already holds a pretraining run (");
  EXPECT_HAS(msg, "final/");
  EXPECT_HAS(msg, "--resume");
  EXPECT_HAS(msg, "--overwrite");
  EXPECT_EQ(tisa::test::slurp(dir + "/final/model.safetensors"), "weights");

  // --overwrite refuses to delete what no run wrote, and deletes nothing then.
  tisa::fs::write_file_atomic(dir + "/notes.txt", "mine");
  EXPECT_HAS(error_of([&] { owner.start_fresh("", layout, true); }), "notes.txt");
  EXPECT_TRUE(stdfs::exists(dir + "/final/model.safetensors"));
  stdfs::remove(dir + "/notes.txt");
  owner.start_fresh("", layout, true);
  EXPECT_FALSE(stdfs::exists(dir + "/final"));
  EXPECT_FALSE(stdfs::exists(dir + "/checkpoints"));
  EXPECT_FALSE(stdfs::exists(dir + "/metrics.jsonl"));
  EXPECT_TRUE(stdfs::exists(dir + "/.lock"));  // still owned

  // GLUE: per task folder; another task's results stay.
  tisa::fs::create_directories(dir + "/RTE/seed-1/best");
  tisa::fs::create_directories(dir + "/MRPC/seed-1/best");
  EXPECT_HAS(error_of([&] { owner.start_fresh("RTE", tisa::glue_task_layout(), false); }),
             dir + "/RTE already holds a GLUE run (seed-1/)");
  owner.start_fresh("RTE", tisa::glue_task_layout(), true);
  EXPECT_FALSE(stdfs::exists(dir + "/RTE/seed-1"));
  EXPECT_TRUE(stdfs::exists(dir + "/MRPC/seed-1/best"));
}

// Issue 36, point 4: a folder that failed before its first checkpoint, or holds only files no run
// wrote, is named with what is there and what will work (not --resume, not --overwrite).
TEST(RunDirectory, SaysWhatIsThereAndWhatWillWork) {
  const std::string dir = tisa::test::make_temp_dir("rundir_msgs") + "/run";
  RunDirectory owner(dir, RunDirectory::Start::kNew);
  const auto& layout = tisa::pretraining_run_layout();
  tisa::fs::write_file_atomic(dir + "/config.yaml", "model: {}\n");
  tisa::fs::write_file_atomic(dir + "/train.log", "error\n");
  std::string msg = error_of([&] { owner.start_fresh("", layout, false); });
  EXPECT_HAS(msg, dir + " holds a pretraining run that stopped before writing anything into checkpoints/ "
                        "(config.yaml, train.log), so it cannot be continued: pass --overwrite");
  stdfs::remove(dir + "/config.yaml");
  stdfs::remove(dir + "/train.log");
  tisa::fs::write_file_atomic(dir + "/notes.txt", "mine");
  msg = error_of([&] { owner.start_fresh("", layout, false); });
  EXPECT_HAS(msg, dir + " holds files that no tisa-train run wrote (notes.txt); choose another --run-dir");
  EXPECT_EQ(msg.find("--resume"), std::string::npos) << msg;
}

TEST(RunDirectory, DefaultNamesNeverCollide) {
  const std::string parent = tisa::test::make_temp_dir("rundir");
  std::set<std::string> names;
  for (int i = 0; i < 5; ++i) names.insert(tisa::create_unique_run_dir(parent, "tiny"));  // same second
  EXPECT_EQ(names.size(), 5u);
  for (const auto& n : names) EXPECT_TRUE(stdfs::is_directory(n)) << n;
}

}  // namespace
