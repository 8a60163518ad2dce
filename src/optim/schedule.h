// Learning-rate schedules (SPEC §7): linear warmup from 0, then
//   linear       (HF get_linear_schedule_with_warmup; decay counts from the end of warmup)
//                lr(t) = base·t/W for t < W, else base·max(0, (T−t)/max(1, T−W))
//   albert_poly  (ALBERT create_optimizer: polynomial_decay power 1 to 0 over T counted from
//                step 0, warmup from step 0)
//                lr(t) = base·t/W for t < W, else base·(1 − min(t,T)/T)      (W = 0: no warmup)
//   constant     lr(t) = base·t/W for t < W, else base (HF constant_schedule_with_warmup)
//
// WHICH LR IS USED BY WHICH UPDATE: t is the number of updates already made, so the first update
// (t = 0) uses lr_at(0), the k-th update (1-based) uses lr_at(k−1). This is both references'
// convention: HF's optimizer.step() k+1 runs with the lr after k scheduler.step() calls = lr(k),
// and ALBERT's update at global_step t (starting at 0) uses lr(t). With warmup both make the first
// update with lr 0. On resume after n updates, the next update uses lr_at(n). The schedule is
// stateless; all arithmetic is float64 (ALBERT's TensorFlow computes in float32: ≤1e-7 relative).
#pragma once
#include <cstdint>

#include "config/config.h"

namespace tisa::optim {

// Warmup steps from a ScheduleConfig: ceil(total·warmup_fraction) when warmup_fraction > 0 (HF
// TrainingArguments.get_warmup_steps), else warmup_steps. Throws tisa::Error on negative values.
int64_t resolve_warmup_steps(const config::ScheduleConfig& cfg, int64_t total_steps);

// The updates a run's schedule spans: schedule.total_steps when > 0, else the run's training.steps.
// A horizon beyond the run's steps stops it part-way through its schedule (a first phase, or NVIDIA
// BERT's steps_this_run); --resume with a larger training.steps then continues the same schedule.
// Throws tisa::Error when total_steps is > 0 and below training_steps.
int64_t schedule_horizon(const config::ScheduleConfig& cfg, int64_t training_steps);

class LrSchedule {
 public:
  // total_steps T = number of updates of the run (TrainingConfig.steps); must be > 0 for linear
  // and albert_poly. Throws tisa::Error for invalid values.
  LrSchedule(config::ScheduleType type, double base_lr, int64_t warmup_steps, int64_t total_steps);
  LrSchedule(const config::ScheduleConfig& cfg, double base_lr, int64_t total_steps);

  // lr of the update made after `updates_done` updates (see above); updates_done >= 0.
  double lr_at(int64_t updates_done) const;

  config::ScheduleType type() const { return type_; }
  double base_lr() const { return base_lr_; }
  int64_t warmup_steps() const { return warmup_; }
  int64_t total_steps() const { return total_; }

 private:
  config::ScheduleType type_;
  double base_lr_;
  int64_t warmup_;
  int64_t total_;
};

}  // namespace tisa::optim
