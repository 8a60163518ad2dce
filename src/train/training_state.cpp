// training_state.json reading/writing and generator-state capture; see training_state.h.
#include "train/training_state.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <torch/torch.h>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::train {
namespace {

constexpr const char* kFormat = "tisa-train training state";
constexpr int kVersion = 1;

std::string bytes_to_hex(const torch::Tensor& bytes) {
  auto t = bytes.contiguous().to(torch::kCPU);
  TISA_CHECK(t.scalar_type() == torch::kUInt8, "generator state is not a byte tensor");
  static const char* digits = "0123456789abcdef";
  const auto* p = t.data_ptr<uint8_t>();
  std::string out;
  out.reserve(static_cast<size_t>(t.numel()) * 2);
  for (int64_t i = 0; i < t.numel(); ++i) {
    out.push_back(digits[p[i] >> 4]);
    out.push_back(digits[p[i] & 15]);
  }
  return out;
}

torch::Tensor hex_to_bytes(const std::string& hex, const std::string& what) {
  if (hex.size() % 2 != 0) throw Error(what + ": odd number of hex digits");
  auto t = torch::empty({static_cast<int64_t>(hex.size() / 2)}, torch::kUInt8);
  auto* p = t.data_ptr<uint8_t>();
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw Error(what + ": invalid hex digit '" + std::string(1, c) + "'");
  };
  for (size_t i = 0; i < hex.size() / 2; ++i)
    p[i] = static_cast<uint8_t>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
  return t;
}

template <class T>
T get_key(const nlohmann::json& j, const char* key, const std::string& source) {
  if (!j.contains(key)) throw Error(source + ": missing key '" + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": key '" + key + "' has the wrong type (" + e.what() + ")");
  }
}

std::optional<double> get_optional_double(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

}  // namespace

nlohmann::json to_json(const TrainingState& s) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["step"] = s.step;
  j["tokens_seen"] = s.tokens_seen;
  j["data_position"] = s.data_position;
  j["rng"] = {{"torch_cpu", s.torch_cpu_rng}, {"torch_cuda", s.torch_cuda_rng}};
  j["consecutive_bad_steps"] = s.consecutive_bad_steps;
  j["skipped_steps"] = s.skipped_steps;
  j["last_eval_mlm_loss"] = s.last_eval_mlm_loss ? nlohmann::json(*s.last_eval_mlm_loss) : nlohmann::json();
  j["best"] = {{"metric", "eval_mlm_loss"},
               {"value", s.best_eval_mlm_loss ? nlohmann::json(*s.best_eval_mlm_loss) : nlohmann::json()},
               {"step", s.best_step}};
  j["schedule"] = {{"type", s.schedule}, {"lr", s.lr}};
  return j;
}

TrainingState training_state_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object() || j.value("format", "") != kFormat)
    throw Error(source + ": not a tisa-train training state (missing \"format\": \"" + kFormat + "\")");
  if (j.value("version", 0) != kVersion)
    throw Error(source + ": training state version " + j["version"].dump() + " is not supported (expected " +
                std::to_string(kVersion) + ")");
  TrainingState s;
  try {
    s.step = get_key<int64_t>(j, "step", source);
    s.tokens_seen = get_key<int64_t>(j, "tokens_seen", source);
    s.data_position = j.value("data_position", nlohmann::json());
    const auto& rng = j.at("rng");
    s.torch_cpu_rng = get_key<std::string>(rng, "torch_cpu", source + " rng");
    s.torch_cuda_rng = rng.value("torch_cuda", "");
    s.consecutive_bad_steps = get_key<int64_t>(j, "consecutive_bad_steps", source);
    s.skipped_steps = j.value("skipped_steps", int64_t{0});
    s.last_eval_mlm_loss = get_optional_double(j, "last_eval_mlm_loss");
    const auto& best = j.at("best");
    s.best_eval_mlm_loss = get_optional_double(best, "value");
    s.best_step = best.value("step", int64_t{-1});
    s.schedule = j.at("schedule").value("type", "");
    s.lr = j.at("schedule").value("lr", 0.0);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": malformed training state (" + e.what() + ")");
  }
  return s;
}

void save_training_state(const TrainingState& state, const std::string& path) {
  fs::write_file_atomic(path, to_json(state).dump(2) + "\n");
}

TrainingState load_training_state(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(fs::read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not valid JSON (" + e.what() + ")");
  }
  return training_state_from_json(j, path);
}

void capture_rng(TrainingState& state, bool cuda) {
  state.torch_cpu_rng = bytes_to_hex(at::globalContext().defaultGenerator(at::kCPU).get_state());
  state.torch_cuda_rng.clear();
  if (cuda) state.torch_cuda_rng = bytes_to_hex(at::globalContext().defaultGenerator(at::kCUDA).get_state());
}

void restore_rng(const TrainingState& state, bool cuda) {
  if (state.torch_cpu_rng.empty()) throw Error("training state has no CPU generator state");
  at::Generator gen = at::globalContext().defaultGenerator(at::kCPU);
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(hex_to_bytes(state.torch_cpu_rng, "rng.torch_cpu"));
  }
  if (cuda && !state.torch_cuda_rng.empty()) {
    at::Generator cuda_gen = at::globalContext().defaultGenerator(at::kCUDA);
    std::lock_guard<std::mutex> lock(cuda_gen.mutex());
    cuda_gen.set_state(hex_to_bytes(state.torch_cuda_rng, "rng.torch_cuda"));
  }
}

}  // namespace tisa::train
