// Progress display for long loops: step/total, loss (or any named values), items/s and ETA.
// On a TTY the line is redrawn in place at most a few times a second; elsewhere (CI, log files)
// a plain line is printed every `plain_every` steps.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tisa {

class Progress {
 public:
  // `unit` names what is counted for the rate, e.g. "tok" gives "tok/s".
  Progress(std::string label, int64_t total, std::string unit, int64_t plain_every = 50);

  // Reports that `done` steps are complete and `items` more units were processed since the last
  // call; `values` are shown as "name value" pairs.
  void update(int64_t done, double items, const std::vector<std::pair<std::string, double>>& values = {});
  // Ends the display (newline on a TTY).
  void finish();

  // Formats seconds as "1h02m", "3m05s" or "42s".
  static std::string format_duration(double seconds);

 private:
  std::string label_, unit_;
  int64_t total_, plain_every_, first_done_ = -1;
  bool tty_;
  double items_total_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drew_ = false;
};

}  // namespace tisa
