#include "common/metrics_writer.h"

#include <spdlog/spdlog.h>

#include <sstream>

#include "common/error.h"
#include "common/fs.h"

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
  if (sink_) sink_->record(event, step, values);
}

void MetricsWriter::drop_records_after(const std::string& path, int64_t step) {
  if (!fs::exists(path)) return;
  std::istringstream in(fs::read_file(path));
  std::string kept, line;
  int64_t dropped = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool keep = record.is_object() && record.contains("step") && record["step"].is_number_integer() &&
                      record["step"].get<int64_t>() <= step;
    if (keep) kept += line + "\n";
    else ++dropped;
  }
  if (dropped == 0) return;
  fs::write_file_atomic(path, kept);
  spdlog::info("[train] {}: dropped {} records after step {} (they are redone from the checkpoint)", path, dropped,
               step);
}

std::vector<MetricsRecord> MetricsWriter::read_records(const std::string& path) {
  std::vector<MetricsRecord> out;
  if (!fs::exists(path)) return out;
  std::istringstream in(fs::read_file(path));
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !record.contains("step") || !record["step"].is_number_integer() ||
        !record.contains("event") || !record["event"].is_string())
      throw Error(path + ":" + std::to_string(number) +
                  ": expected a JSON object with an integer \"step\" and a string \"event\"");
    MetricsRecord r{record["event"].get<std::string>(), record["step"].get<int64_t>(), nlohmann::json::object()};
    for (auto it = record.begin(); it != record.end(); ++it)
      if (it.key() != "event" && it.key() != "step" && it.key() != "time") r.values[it.key()] = it.value();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tisa
