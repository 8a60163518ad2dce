#include "common/metrics_writer.h"

#include "common/error.h"

namespace tisa {

MetricsWriter::MetricsWriter(const std::string& path) : out_(path, std::ios::app) {
  if (!out_) throw Error("cannot open metrics file " + path + " for appending");
}

void MetricsWriter::write(const std::string& event, int64_t step, const nlohmann::json& values) {
  if (!out_.is_open()) return;
  nlohmann::json record = {{"event", event}, {"step", step}};
  record["time"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  for (auto it = values.begin(); it != values.end(); ++it) record[it.key()] = it.value();
  std::lock_guard<std::mutex> lock(mutex_);
  out_ << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out_.flush();
}

}  // namespace tisa
