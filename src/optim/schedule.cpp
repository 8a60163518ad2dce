// Learning-rate schedules (SPEC §7; formulas and the step convention in schedule.h).
#include "optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"

namespace tisa::optim {

int64_t resolve_warmup_steps(const config::ScheduleConfig& cfg, int64_t total_steps) {
  if (cfg.warmup_steps < 0) throw Error("schedule.warmup_steps: expected >= 0, got " +
                                        std::to_string(cfg.warmup_steps));
  if (cfg.warmup_fraction < 0 || cfg.warmup_fraction > 1)
    throw Error("schedule.warmup_fraction: expected a value in [0, 1], got " +
                std::to_string(cfg.warmup_fraction));
  if (cfg.warmup_fraction > 0)
    return static_cast<int64_t>(std::ceil(static_cast<double>(total_steps) * cfg.warmup_fraction));
  return cfg.warmup_steps;
}

int64_t schedule_horizon(const config::ScheduleConfig& cfg, int64_t training_steps) {
  if (cfg.total_steps == 0) return training_steps;
  if (cfg.total_steps < training_steps)
    throw Error("schedule.total_steps: expected 0 (= training.steps) or >= training.steps (" +
                std::to_string(training_steps) + "), got " + std::to_string(cfg.total_steps));
  return cfg.total_steps;
}

LrSchedule::LrSchedule(config::ScheduleType type, double base_lr, int64_t warmup_steps,
                       int64_t total_steps)
    : type_(type), base_lr_(base_lr), warmup_(warmup_steps), total_(total_steps) {
  if (!(base_lr >= 0) || !std::isfinite(base_lr))
    throw Error("schedule: learning rate must be finite and >= 0, got " + std::to_string(base_lr));
  if (warmup_steps < 0)
    throw Error("schedule.warmup_steps: expected >= 0, got " + std::to_string(warmup_steps));
  if (type != config::ScheduleType::kConstant && total_steps <= 0)
    throw Error("schedule: a decaying schedule needs training.steps > 0, got " +
                std::to_string(total_steps));
}

LrSchedule::LrSchedule(const config::ScheduleConfig& cfg, double base_lr, int64_t total_steps)
    : LrSchedule(cfg.type, base_lr, resolve_warmup_steps(cfg, total_steps), total_steps) {}

double LrSchedule::lr_at(int64_t t) const {
  if (t < 0) throw Error("schedule: negative step " + std::to_string(t));
  const double td = static_cast<double>(t);
  if (t < warmup_) return base_lr_ * (td / static_cast<double>(warmup_));  // linear warmup from 0
  switch (type_) {
    case config::ScheduleType::kConstant:
      return base_lr_;
    case config::ScheduleType::kLinearHF: {
      // HF: max(0, (T − t) / max(1, T − W)), the integer difference taken first.
      const double rest = static_cast<double>(total_ - t);
      const double span = static_cast<double>(std::max<int64_t>(1, total_ - warmup_));
      return base_lr_ * std::max(0.0, rest / span);
    }
    case config::ScheduleType::kAlbertPoly: {
      // tf.train.polynomial_decay(power 1, end 0, cycle False): base·(1 − min(t, T)/T).
      const double done = static_cast<double>(std::min(t, total_)) / static_cast<double>(total_);
      return base_lr_ * (1.0 - done);
    }
  }
  throw Error("schedule: unknown schedule type");
}

}  // namespace tisa::optim
