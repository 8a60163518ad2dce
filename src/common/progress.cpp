#include "common/progress.h"

#include <unistd.h>

#include <cstdio>
#include <sstream>

namespace tisa {

Progress::Progress(std::string label, int64_t total, std::string unit, int64_t plain_every)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      plain_every_(plain_every > 0 ? plain_every : 1),
      tty_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

std::string Progress::format_duration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e8) return "?";
  auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

void Progress::update(int64_t done, double items, const std::vector<std::pair<std::string, double>>& values) {
  auto now = std::chrono::steady_clock::now();
  if (first_done_ < 0) {
    // Rates and ETA count from the first report so that a resumed run does not look infinitely fast.
    first_done_ = done > 0 ? done - 1 : 0;
    start_ = now;
  }
  items_total_ += items;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  bool last = done >= total_;
  if (tty_) {
    if (!last && std::chrono::duration<double>(now - last_draw_).count() < 0.25) return;
  } else if (!last && done % plain_every_ != 0) {
    return;
  }
  last_draw_ = now;
  double rate = elapsed > 0 ? items_total_ / elapsed : 0.0;
  double steps_done = static_cast<double>(done - first_done_);
  double eta = steps_done > 0 ? elapsed / steps_done * static_cast<double>(total_ - done) : -1;
  std::ostringstream line;
  line << label_ << " " << done << "/" << total_;
  char buf[64];
  for (const auto& [name, value] : values) {
    std::snprintf(buf, sizeof buf, " %s %.4g", name.c_str(), value);
    line << buf;
  }
  std::snprintf(buf, sizeof buf, " %.0f %s/s", rate, unit_.c_str());
  line << buf << " elapsed " << format_duration(elapsed) << " ETA " << format_duration(eta);
  if (tty_) std::fprintf(stderr, "\r\033[K%s", line.str().c_str());
  else std::fprintf(stderr, "%s\n", line.str().c_str());
  std::fflush(stderr);
  drew_ = true;
}

void Progress::finish() {
  if (tty_ && drew_) std::fprintf(stderr, "\n");
  drew_ = false;
}

}  // namespace tisa
