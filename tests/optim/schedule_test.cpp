// Learning-rate schedules against shared/golden/optim/schedules.json (HF close(0, 1e-12), ALBERT
// close(1e-12, 1e-6)), plus warmup resolution and error cases.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "config/config.h"
#include "optim/schedule.h"
#include "support/test_paths.h"

namespace {

using tisa::config::ScheduleType;
using tisa::optim::LrSchedule;

nlohmann::json load_schedules() {
  std::ifstream in(tisa::test::shared_path("golden/optim/schedules.json"));
  return nlohmann::json::parse(in);
}

void check(const LrSchedule& s, const nlohmann::json& j, const std::string& key, double atol,
           double rtol) {
  const auto steps = j.at("steps").get<std::vector<int64_t>>();
  const auto lrs = j.at(key).at("lr").get<std::vector<double>>();
  ASSERT_EQ(steps.size(), lrs.size());
  for (size_t i = 0; i < steps.size(); ++i)
    EXPECT_LE(std::abs(s.lr_at(steps[i]) - lrs[i]), atol + rtol * std::abs(lrs[i]))
        << key << " at step " << steps[i] << ": " << s.lr_at(steps[i]) << " vs " << lrs[i];
}

TEST(Schedule, HfLinearWithWarmupMatchesGolden) {
  TISA_REQUIRE_SHARED("golden/optim/schedules.json");
  auto j = load_schedules();
  LrSchedule s(ScheduleType::kLinearHF, j.at("base_lr").get<double>(),
               j.at("num_warmup_steps").get<int64_t>(), j.at("num_training_steps").get<int64_t>());
  check(s, j, "hf_linear_with_warmup", 0.0, 1e-12);
  EXPECT_EQ(s.lr_at(0), 0.0);      // the first update uses lr 0
  EXPECT_EQ(s.lr_at(5), 1e-3);     // peak right after warmup
  EXPECT_EQ(s.lr_at(25), 0.0);     // clamped past the end
}

TEST(Schedule, AlbertPolyDecayMatchesGolden) {
  TISA_REQUIRE_SHARED("golden/optim/schedules.json");
  auto j = load_schedules();
  tisa::config::ScheduleConfig cfg;
  cfg.type = ScheduleType::kAlbertPoly;
  cfg.warmup_steps = j.at("num_warmup_steps").get<int64_t>();
  LrSchedule s(cfg, j.at("base_lr").get<double>(), j.at("num_training_steps").get<int64_t>());
  check(s, j, "albert_poly_decay_with_warmup", 1e-12, 1e-6);
  EXPECT_NEAR(s.lr_at(5), 7.5e-4, 1e-15);  // the drop after warmup: decay counts from step 0
  EXPECT_EQ(s.lr_at(30), 0.0);
}

TEST(Schedule, ConstantWithAndWithoutWarmup) {
  LrSchedule plain(ScheduleType::kConstant, 2e-5, 0, 0);
  EXPECT_EQ(plain.lr_at(0), 2e-5);
  EXPECT_EQ(plain.lr_at(1000000), 2e-5);
  LrSchedule warm(ScheduleType::kConstant, 1e-3, 4, 10);
  EXPECT_EQ(warm.lr_at(0), 0.0);
  EXPECT_DOUBLE_EQ(warm.lr_at(2), 5e-4);
  EXPECT_EQ(warm.lr_at(4), 1e-3);
  EXPECT_EQ(warm.lr_at(50), 1e-3);
}

TEST(Schedule, NoWarmupStartsAtPeak) {
  EXPECT_EQ(LrSchedule(ScheduleType::kLinearHF, 1e-3, 0, 10).lr_at(0), 1e-3);
  EXPECT_DOUBLE_EQ(LrSchedule(ScheduleType::kLinearHF, 1e-3, 0, 10).lr_at(5), 5e-4);
  EXPECT_EQ(LrSchedule(ScheduleType::kAlbertPoly, 1e-3, 0, 10).lr_at(0), 1e-3);
  EXPECT_DOUBLE_EQ(LrSchedule(ScheduleType::kAlbertPoly, 1e-3, 0, 10).lr_at(5), 5e-4);
}

TEST(Schedule, WarmupFractionRoundsUpAsHf) {
  tisa::config::ScheduleConfig cfg;
  cfg.warmup_steps = 7;
  EXPECT_EQ(tisa::optim::resolve_warmup_steps(cfg, 1000), 7);
  cfg.warmup_fraction = 0.1;
  EXPECT_EQ(tisa::optim::resolve_warmup_steps(cfg, 1000), 100);  // overrides warmup_steps
  EXPECT_EQ(tisa::optim::resolve_warmup_steps(cfg, 1001), 101);  // ceil(100.1)
  EXPECT_EQ(LrSchedule(cfg, 1e-3, 1000).warmup_steps(), 100);
}

// schedule.total_steps: the horizon the decay spans; 0 means the run's own training.steps.
TEST(Schedule, HorizonIsTotalStepsElseTheRunsSteps) {
  tisa::config::ScheduleConfig cfg;
  EXPECT_EQ(tisa::optim::schedule_horizon(cfg, 3000), 3000);
  cfg.total_steps = 15000;
  EXPECT_EQ(tisa::optim::schedule_horizon(cfg, 3000), 15000);
  EXPECT_EQ(tisa::optim::schedule_horizon(cfg, 15000), 15000);
  EXPECT_THROW(tisa::optim::schedule_horizon(cfg, 15001), tisa::Error);
  // The recipe's rate after 3,000 of 15,000 updates: 0.005 · (1 − 3000/15000) = 0.004.
  cfg.type = ScheduleType::kAlbertPoly;
  cfg.warmup_steps = 100;
  EXPECT_NEAR(LrSchedule(cfg, 0.005, tisa::optim::schedule_horizon(cfg, 3000)).lr_at(3000), 0.004, 1e-15);
}

TEST(Schedule, InvalidValuesAreErrors) {
  EXPECT_THROW(LrSchedule(ScheduleType::kLinearHF, 1e-3, 0, 0), tisa::Error);
  EXPECT_THROW(LrSchedule(ScheduleType::kAlbertPoly, 1e-3, -1, 10), tisa::Error);
  EXPECT_THROW(LrSchedule(ScheduleType::kLinearHF, -1.0, 0, 10), tisa::Error);
  EXPECT_THROW(LrSchedule(ScheduleType::kLinearHF, 1e-3, 0, 10).lr_at(-1), tisa::Error);
  tisa::config::ScheduleConfig cfg;
  cfg.warmup_fraction = 1.5;
  EXPECT_THROW(tisa::optim::resolve_warmup_steps(cfg, 10), tisa::Error);
}

}  // namespace
