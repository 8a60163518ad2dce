// Atomic, manifest-sealed checkpoint folders; see checkpoint.h.
#include "train/checkpoint.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::train {
namespace stdfs = std::filesystem;
namespace {

constexpr const char* kManifestFormat = "tisa-train checkpoint manifest";
constexpr int kManifestVersion = 1;
constexpr const char* kStepPrefix = "step-";
constexpr const char* kTempPrefix = ".tmp-step-";

// Parses "step-000100" → 100; nullopt for any other name.
std::optional<int64_t> parse_step_folder(const std::string& name) {
  const std::string prefix = kStepPrefix;
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  std::string digits = name.substr(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  if (digits.size() > 18) return std::nullopt;
  return std::stoll(digits);
}

void remove_all_or_warn(const std::string& path) {
  std::error_code ec;
  stdfs::remove_all(path, ec);
  if (ec) spdlog::warn("[checkpoint] cannot remove {}: {}", path, ec.message());
}

}  // namespace

void verify_checkpoint(const std::string& checkpoint_dir) {
  const std::string manifest_path = checkpoint_dir + "/" + kManifestFile;
  if (!fs::exists(manifest_path))
    throw Error("checkpoint " + checkpoint_dir + " is incomplete: " + kManifestFile +
                " is missing (the save was interrupted before it finished)");
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(fs::read_file(manifest_path));
  } catch (const nlohmann::json::exception& e) {
    throw Error("checkpoint " + checkpoint_dir + " is corrupt: " + kManifestFile + " is not valid JSON (" +
                e.what() + ")");
  }
  if (!manifest.is_object() || manifest.value("format", "") != kManifestFormat || !manifest.contains("files") ||
      !manifest["files"].is_object())
    throw Error("checkpoint " + checkpoint_dir + " is corrupt: " + kManifestFile +
                " lacks the expected \"format\" and \"files\" entries");
  if (manifest.value("version", 0) != kManifestVersion)
    throw Error("checkpoint " + checkpoint_dir + ": manifest version " + manifest["version"].dump() +
                " is not supported (expected " + std::to_string(kManifestVersion) + ")");
  for (const auto& [name, entry] : manifest["files"].items()) {
    const std::string path = checkpoint_dir + "/" + name;
    if (!fs::exists(path))
      throw Error("checkpoint " + checkpoint_dir + " is corrupt: " + name + " is listed in the manifest but missing");
    const auto expected_size = entry.at("size").get<uint64_t>();
    const auto actual_size = static_cast<uint64_t>(stdfs::file_size(path));
    if (actual_size != expected_size)
      throw Error("checkpoint " + checkpoint_dir + " is corrupt: " + name + " has " + std::to_string(actual_size) +
                  " bytes, the manifest says " + std::to_string(expected_size) +
                  (actual_size < expected_size ? " (truncated)" : ""));
    const auto expected_hash = entry.at("fnv1a64").get<std::string>();
    const auto actual_hash = fs::file_hash_hex(path);
    if (actual_hash != expected_hash)
      throw Error("checkpoint " + checkpoint_dir + " is corrupt: the content hash of " + name + " is " + actual_hash +
                  ", the manifest says " + expected_hash + " (the file was modified or damaged)");
  }
}

CheckpointStore::CheckpointStore(std::string dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }

std::string CheckpointStore::folder_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%06lld", kStepPrefix, static_cast<long long>(step));
  return buf;
}

std::string CheckpointStore::save(int64_t step, const std::function<void(const std::string&)>& write_payload) {
  std::random_device rd;
  const std::string tmp = dir_ + "/" + kTempPrefix + std::to_string(step) + "-" + std::to_string(rd());
  const std::string final_path = dir_ + "/" + folder_name(step);
  remove_all_or_warn(tmp);
  fs::create_directories(tmp);
  try {
    write_payload(tmp);
    // Seal: fsync every payload file, then list them with sizes and hashes in the manifest.
    nlohmann::json files = nlohmann::json::object();
    std::vector<std::string> names;
    for (const auto& entry : stdfs::directory_iterator(tmp)) {
      if (!entry.is_regular_file())
        throw Error("checkpoint payload " + entry.path().string() + " is not a plain file");
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      if (name == kManifestFile) throw Error("checkpoint payload must not contain its own " + std::string(kManifestFile));
      const std::string path = tmp + "/" + name;
      fs::fsync_path(path);
      files[name] = {{"size", static_cast<uint64_t>(stdfs::file_size(path))}, {"fnv1a64", fs::file_hash_hex(path)}};
    }
    nlohmann::json manifest = {{"format", kManifestFormat}, {"version", kManifestVersion}, {"step", step},
                               {"files", files}};
    fs::write_file_atomic(tmp + "/" + kManifestFile, manifest.dump(2) + "\n");
    fs::fsync_path(tmp);
    // Replace an older checkpoint of the same step (e.g. the final save after a resume at that step).
    if (fs::exists(final_path)) remove_all_or_warn(final_path);
    std::error_code ec;
    stdfs::rename(tmp, final_path, ec);
    if (ec) throw Error("cannot rename " + tmp + " to " + final_path + ": " + ec.message());
    fs::fsync_path(dir_);
  } catch (...) {
    remove_all_or_warn(tmp);
    throw;
  }
  return final_path;
}

std::vector<CheckpointInfo> CheckpointStore::list() const {
  std::vector<CheckpointInfo> out;
  if (!fs::exists(dir_)) return out;
  for (const auto& entry : stdfs::directory_iterator(dir_)) {
    if (!entry.is_directory()) continue;
    if (auto step = parse_step_folder(entry.path().filename().string()))
      out.push_back({entry.path().string(), *step});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return out;
}

std::optional<CheckpointInfo> CheckpointStore::latest_valid() const {
  auto all = list();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      verify_checkpoint(it->path);
      return *it;
    } catch (const Error& e) {
      spdlog::warn("[checkpoint] skipping {}: {}", it->path, e.what());
    }
  }
  return std::nullopt;
}

void CheckpointStore::prune(int64_t keep_last, std::optional<int64_t> keep_step) const {
  for (const auto& entry : stdfs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind(kTempPrefix, 0) == 0) remove_all_or_warn(entry.path().string());
  }
  if (keep_last <= 0) return;
  auto all = list();
  const auto n = static_cast<int64_t>(all.size());
  for (int64_t i = 0; i < n - keep_last; ++i) {
    if (keep_step && all[static_cast<size_t>(i)].step == *keep_step) continue;
    spdlog::debug("[checkpoint] removing {}", all[static_cast<size_t>(i)].path);
    remove_all_or_warn(all[static_cast<size_t>(i)].path);
  }
}

}  // namespace tisa::train
