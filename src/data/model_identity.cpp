// A model folder's record of what it was made from; see model_identity.h.
#include "data/model_identity.h"

#include <spdlog/spdlog.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "common/fs.h"
#include "data/pretrain_dataset.h"

namespace tisa::data {

void write_model_identity(const std::string& model_dir, const std::string& tokenizer_identity,
                          const std::string& dataset_identity, const std::optional<MaskingRecord>& masking) {
  nlohmann::json j = {
      {"format", 1},
      {"tokenizer", {{"identity", tokenizer_identity}, {"files", tokenizer_file_hashes(model_dir)}}},
      {"dataset", dataset_identity}};
  if (masking) j["masking"] = {{"masked_lm_prob", masking->masked_lm_prob}, {"max_ngram", masking->max_ngram}};
  fs::write_file_atomic(model_dir + "/" + kModelIdentityName, j.dump(2) + "\n");
}

std::optional<ModelIdentity> read_model_identity(const std::string& model_dir) {
  const std::string path = model_dir + "/" + kModelIdentityName;
  if (!fs::exists(path)) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(fs::read_file(path));
    ModelIdentity id;
    id.tokenizer = j.at("tokenizer").at("identity").get<std::string>();
    id.tokenizer_files = j.at("tokenizer").at("files").get<std::map<std::string, std::string>>();
    id.dataset = j.at("dataset").get<std::string>();
    if (j.contains("masking"))
      id.masking = MaskingRecord{j.at("masking").at("masked_lm_prob").get<double>(),
                                 j.at("masking").at("max_ngram").get<int64_t>()};
    return id;
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": expected {\"tokenizer\": {\"identity\", \"files\"}, \"dataset\"} (" + e.what() +
                "); it is written by tisa-train with the model, do not edit it");
  }
}

std::optional<ModelIdentity> verified_model_identity(const std::string& model_dir) {
  auto id = read_model_identity(model_dir);
  if (!id) {
    static std::mutex mutex;
    static std::set<std::string> told;
    std::lock_guard<std::mutex> lock(mutex);
    if (told.insert(model_dir).second)
      spdlog::info("[model] {} has no {} (a folder from elsewhere, or written before models recorded their "
                   "tokenizer): its tokenizer cannot be checked against the data",
                   model_dir, kModelIdentityName);
    return id;
  }
  for (const auto& [name, hash] : id->tokenizer_files) {
    const std::string path = model_dir + "/" + name;
    if (!fs::exists(path))
      throw Error(model_dir + ": the tokenizer file " + name + " that " + kModelIdentityName +
                  " records is missing (the model was trained with " + id->tokenizer + ")");
    const std::string got = fs::file_hash_hex(path);
    if (got != hash)
      throw Error(path + " is not the tokenizer this model was trained with (" + id->tokenizer +
                  "): its content hashes to " + got + ", " + kModelIdentityName + " records " + hash);
  }
  return id;
}

void check_same_tokenizer(const std::optional<ModelIdentity>& model, const std::string& model_dir,
                          const std::string& data_tokenizer, const std::map<std::string, std::string>& data_files,
                          const std::string& data_what) {
  if (!model) return;
  const char* hint = ": use data prepared with the model's tokenizer";
  if (!model->tokenizer.empty() && !data_tokenizer.empty() && model->tokenizer != data_tokenizer)
    throw Error(data_what + " was tokenised with " + data_tokenizer + ", but the model " + model_dir +
                " was trained with " + model->tokenizer + hint);
  for (const auto& [name, hash] : model->tokenizer_files) {
    const auto it = data_files.find(name);
    if (it != data_files.end() && it->second != hash)
      throw Error(data_what + " was tokenised with another " + name + " (hash " + it->second + ", tokenizer " +
                  data_tokenizer + ") than the model " + model_dir + " (hash " + hash + ", tokenizer " +
                  (model->tokenizer.empty() ? "not recorded" : model->tokenizer) + ")" + hint);
  }
}

}  // namespace tisa::data
