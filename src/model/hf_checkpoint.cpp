// Hugging Face model directories: config.json + model.safetensors; see hf_checkpoint.h.
#include "model/hf_checkpoint.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "common/error.h"
#include "common/fs.h"
#include "config/config_loader.h"
#include "model/hf_remote_code.h"
#include "model/position/shaw.h"
#include "model/weight_check.h"

namespace tisa::model {
namespace {

using nlohmann::json;

// tisa_identity.json (data/model_identity.h) records the tokenizer files' hashes: it travels with them.
const char* const kTokenizerFiles[] = {"spiece.model", "vocab.txt", "tokenizer.json", "tokenizer_config.json",
                                       "special_tokens_map.json", "tisa_tokenizer.json", "tokenization_tisa_albert.py",
                                       "tisa_identity.json"};
const char* const kHfPositionTable = "albert.embeddings.position_embeddings.weight";
// HF relative_key keeps one distance table per attention module (group G, inner layer I).
const std::regex kHfDistanceName(R"(albert\.encoder\.albert_layer_groups\.(\d+)\.albert_layers\.(\d+)\.attention\.distance_embedding\.weight)");

template <class T>
void read_key(const json& j, const char* key, T& out, const std::string& file) {
  if (!j.contains(key) || j[key].is_null()) return;
  try {
    out = j[key].get<T>();
  } catch (const json::exception& e) {
    throw Error(file + ": key '" + key + "' has the wrong type: " + j[key].dump());
  }
}

// The sizes of a config.json as the YAML config's rules see them (config/validate.cpp), named by
// the file's keys. hidden_size and num_attention_heads must be present: HF's own defaults are
// ALBERT-xxlarge's (4096 / 64), ours ALBERT-base's (768 / 12), so a fallback loads neither.
void check_hf_sizes(const json& j, const config::ModelConfig& m, const std::string& file) {
  for (const char* key : {"hidden_size", "num_attention_heads"})
    if (!j.contains(key) || j[key].is_null())
      throw Error(file + ": " + key + " is missing (expected a positive integer; the weights' shapes depend on it)");
  config::Config whole;
  whole.model = m;
  std::string problems;
  for (const auto& p : config::validate(whole))
    if (p.key.rfind("model.", 0) == 0 && p.key.rfind("model.position.", 0) != 0)  // positions: check_model_config
      problems += (problems.empty() ? "" : "; ") + p.key.substr(6) + " " + p.message;
  if (!problems.empty()) throw Error(file + ": " + problems);
}

std::string join_path(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace

// ---------------------------------------------------------------------------------- config.json
HfConfig read_hf_config(const std::string& dir) {
  const std::string file = join_path(dir, "config.json");
  json j;
  try {
    j = json::parse(fs::read_file(file));
  } catch (const json::exception& e) {
    throw Error(file + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw Error(file + ": expected a JSON object");
  HfConfig c;
  auto& m = c.model;
  read_key(j, "vocab_size", m.vocab_size, file);
  read_key(j, "embedding_size", m.embedding_size, file);
  read_key(j, "hidden_size", m.hidden_size, file);
  read_key(j, "num_hidden_layers", m.num_hidden_layers, file);
  read_key(j, "num_hidden_groups", m.num_hidden_groups, file);
  read_key(j, "inner_group_num", m.inner_group_num, file);
  read_key(j, "num_attention_heads", m.num_attention_heads, file);
  read_key(j, "intermediate_size", m.intermediate_size, file);
  if (j.contains("hidden_act") && !j["hidden_act"].is_null()) {
    // Through the one name table of activations (config.h), so HF names stay HF names.
    const std::string act = j["hidden_act"].is_string() ? j["hidden_act"].get<std::string>() : j["hidden_act"].dump();
    const auto value = config::value_of(act, config::kHiddenActNames);
    if (!value) {
      std::string known;
      for (const auto& [name, v] : config::kHiddenActNames) known += std::string(known.empty() ? "" : ", ") + name;
      throw Error(file + ": hidden_act '" + act + "' is not supported (expected one of: " + known + ")");
    }
    m.hidden_act = *value;
  }
  read_key(j, "hidden_dropout_prob", m.hidden_dropout_prob, file);
  read_key(j, "attention_probs_dropout_prob", m.attention_probs_dropout_prob, file);
  read_key(j, "classifier_dropout_prob", m.classifier_dropout_prob, file);
  read_key(j, "max_position_embeddings", m.max_position_embeddings, file);
  read_key(j, "type_vocab_size", m.type_vocab_size, file);
  read_key(j, "layer_norm_eps", m.layer_norm_eps, file);
  read_key(j, "initializer_range", m.initializer_range, file);
  read_key(j, "pad_token_id", m.pad_token_id, file);
  std::string model_type = kAlbertModelType;
  read_key(j, "model_type", model_type, file);
  if (model_type != kAlbertModelType && model_type != kRemoteModelType)
    throw Error(file + ": model_type '" + model_type + "' is not supported (expected " + kAlbertModelType + " or " +
                kRemoteModelType + ")");
  c.architecture = kPretrainingArchitecture;
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty()) {
    if (!j["architectures"][0].is_string())
      throw Error(file + ": architectures[0] must be a string, got " + j["architectures"][0].dump());
    c.architecture = j["architectures"][0].get<std::string>();
    c.architecture = strip_remote_prefix(c.architecture);  // TisaAlbertFor… (remote code) → AlbertFor…
  }
  if (c.architecture != kPretrainingArchitecture && c.architecture != kClassificationArchitecture)
    throw Error(file + ": architectures[0] '" + j["architectures"][0].get<std::string>() + "' is not supported (expected " +
                kPretrainingArchitecture + " or " + kClassificationArchitecture +
                ", or their TisaAlbert… forms; a model saved without heads cannot be imported)");
  if (j.contains("num_labels")) read_key(j, "num_labels", c.num_labels, file);
  else if (j.contains("id2label") && j["id2label"].is_object()) c.num_labels = static_cast<int64_t>(j["id2label"].size());
  c.hf_position_type = "absolute";
  read_key(j, "position_embedding_type", c.hf_position_type, file);
  if (model_type == kRemoteModelType && !j.contains("tisa_train"))
    throw Error(file + ": model_type " + kRemoteModelType + " needs the tisa_train block with the position "
                "settings (tisa_train.position), and it is missing; without it the position parameters cannot be read");
  if (j.contains("tisa_train")) {
    const auto& block = j["tisa_train"];
    if (!block.is_object()) throw Error(file + ": tisa_train must be an object");
    for (auto it = block.begin(); it != block.end(); ++it)
      if (it.key() != "position") throw Error(file + ": tisa_train." + it.key() + ": unknown key (expected: position)");
    if (block.contains("position"))
      m.position = config::position_config_from_json(block["position"], file, "tisa_train.position");
  } else if (c.hf_position_type == "absolute") {
    m.position = config::PositionConfig{};
    m.position.absolute = true;
    m.position.relative = "none";
  } else if (c.hf_position_type == "relative_key") {
    // One distance table per attention module (group × inner layer), shared like its weights.
    m.position = config::PositionConfig{};
    m.position.absolute = false;
    m.position.relative = "shaw";
    auto& shaw = m.position.settings<ShawSettings>();
    shaw.max_distance = m.max_position_embeddings - 1;
    shaw.values = false;
    shaw.per_layer = false;
    shaw.per_attention_module = true;
  } else if (c.hf_position_type == "relative_key_query") {
    throw Error(file + ": position_embedding_type relative_key_query is not supported: its key-side term "
                "k_j·E[i−j] has no equivalent in our schemes (shaw adds q_i·aK and α·aV only); "
                "relative_key and absolute checkpoints can be imported");
  } else {
    throw Error(file + ": position_embedding_type '" + c.hf_position_type +
                "' is not supported (expected absolute or relative_key)");
  }
  check_hf_sizes(j, m, file);
  check_model_config(m);
  return c;
}

std::string hf_config_json(const config::ModelConfig& m, const std::string& architecture, int64_t num_labels) {
  const bool plain = plain_albert_expresses(m.position);
  json j = json::object();
  j["architectures"] = {plain ? architecture : remote_architecture(architecture)};
  j["model_type"] = plain ? kAlbertModelType : kRemoteModelType;
  if (!plain) j["auto_map"] = remote_auto_map();
  j["vocab_size"] = m.vocab_size;
  j["embedding_size"] = m.embedding_size;
  j["hidden_size"] = m.hidden_size;
  j["num_hidden_layers"] = m.num_hidden_layers;
  j["num_hidden_groups"] = m.num_hidden_groups;
  j["num_attention_heads"] = m.num_attention_heads;
  j["intermediate_size"] = m.intermediate_size;
  j["inner_group_num"] = m.inner_group_num;
  j["hidden_act"] = config::name_of(m.hidden_act, config::kHiddenActNames);
  j["hidden_dropout_prob"] = m.hidden_dropout_prob;
  j["attention_probs_dropout_prob"] = m.attention_probs_dropout_prob;
  j["classifier_dropout_prob"] = m.classifier_dropout_prob;
  j["max_position_embeddings"] = m.max_position_embeddings;
  j["type_vocab_size"] = m.type_vocab_size;
  j["initializer_range"] = m.initializer_range;
  j["layer_norm_eps"] = m.layer_norm_eps;
  j["pad_token_id"] = m.pad_token_id;
  j["bos_token_id"] = 2;
  j["eos_token_id"] = 3;
  json id2label = json::object(), label2id = json::object();
  for (int64_t i = 0; i < num_labels; ++i) {
    id2label[std::to_string(i)] = "LABEL_" + std::to_string(i);
    label2id["LABEL_" + std::to_string(i)] = i;
  }
  j["id2label"] = id2label;
  j["label2id"] = label2id;
  if (plain) {
    j["position_embedding_type"] = "absolute";  // read by transformers 4.x; 5.x has only absolute
  } else {
    // The remote code and our import read the position settings from here (SPEC §4).
    j["tisa_train"] = {{"position", config::position_config_to_json(m.position)}};
  }
  return j.dump(2) + "\n";
}

// ---------------------------------------------------------------------------------- tensors
TensorMap from_hf_tensors(const TensorMap& hf, const HfConfig& config, const std::string& source) {
  const bool hf_relative = config.hf_position_type == "relative_key" &&
                           config.model.position.settings<ShawSettings>().per_attention_module;
  const auto& m = config.model;
  const double sqrt_d = std::sqrt(static_cast<double>(m.hidden_size / m.num_attention_heads));
  TensorMap out;
  for (const auto& [name, t] : hf) {
    if (name.rfind("predictions.decoder.", 0) == 0) continue;  // tied copies
    if (name.size() >= 12 && name.compare(name.size() - 12, 12, "position_ids") == 0) continue;
    if (hf_relative && name == kHfPositionTable) continue;  // HF keeps it but never uses it with relative_key
    std::smatch match;
    if (hf_relative && std::regex_match(name, match, kHfDistanceName)) {
      const int64_t group = std::stoll(match[1]), inner = std::stoll(match[2]);
      if (group >= m.num_hidden_groups || inner >= m.inner_group_num)
        throw Error(source + ": " + name + " names attention module (" + match[1].str() + ", " + match[2].str() +
                    ") of a model with num_hidden_groups = " + std::to_string(m.num_hidden_groups) +
                    ", inner_group_num = " + std::to_string(m.inner_group_num));
      if (t.dim() != 2 || t.size(0) != 2 * m.max_position_embeddings - 1)
        throw Error(source + ": " + name + " has shape " + c10::str(t.sizes()) + ", expected [2P−1, d] with P = " +
                    std::to_string(m.max_position_embeddings));
      // HF row (P−1)+(i−j) → our row (P−1)+(j−i): reverse the rows; ×√d because HF ALBERT adds q·E
      // unscaled while shaw divides its key term by √d (SPEC §2).
      const std::string ours = "albert.encoder.shaw." + std::to_string(group * m.inner_group_num + inner) + ".keys";
      out[ours] = (t.flip({0}).to(torch::kDouble) * sqrt_d).to(t.scalar_type());
      continue;
    }
    out[name] = t;
  }
  return out;
}

std::vector<std::string> parameter_names(const torch::nn::Module& model) {
  std::vector<std::string> names;
  for (const auto& p : model.named_parameters(true)) names.push_back(p.key());
  return names;
}

TensorMap state_dict(const torch::nn::Module& model) {
  TensorMap out;
  for (const auto& p : model.named_parameters(true)) out[p.key()] = p.value();
  return out;
}

void load_state_dict(torch::nn::Module& model, const TensorMap& tensors, const std::string& source) {
  std::vector<std::string> problems;
  std::set<std::string> used;
  auto params = model.named_parameters(true);
  for (const auto& p : params) {
    auto it = tensors.find(p.key());
    if (it == tensors.end()) {
      problems.push_back("missing tensor '" + p.key() + "' " + c10::str(p.value().sizes()));
      continue;
    }
    used.insert(p.key());
    if (!it->second.is_floating_point())  // never cast a BOOL/I64 tensor into a weight
      problems.push_back("tensor '" + p.key() + "' has dtype " + std::string(c10::toString(it->second.scalar_type())) +
                         ", a weight must be floating point (F32, F16, BF16 or F64)");
    else if (it->second.sizes() != p.value().sizes())
      problems.push_back("tensor '" + p.key() + "' has shape " + c10::str(it->second.sizes()) + ", the model expects " +
                         c10::str(p.value().sizes()));
  }
  for (const auto& [name, t] : tensors)
    if (!used.count(name)) problems.push_back("unknown tensor '" + name + "' " + c10::str(t.sizes()));
  if (!problems.empty()) {
    std::string msg = source + ": checkpoint does not match the model:";
    for (size_t i = 0; i < problems.size() && i < 20; ++i) msg += "\n  " + problems[i];
    if (problems.size() > 20) msg += "\n  … and " + std::to_string(problems.size() - 20) + " more";
    throw Error(msg);
  }
  for (const auto& p : params) require_finite(tensors.at(p.key()), p.key(), source);
  torch::NoGradGuard guard;
  for (auto& p : params) p.value().copy_(tensors.at(p.key()));
}

// ---------------------------------------------------------------------------------- load/save
torch::nn::Module& LoadedModel::module() {
  if (pretraining) return *pretraining;
  return *classification;
}

AlbertModel& LoadedModel::albert() { return pretraining ? pretraining->albert : classification->albert; }

LoadedModel load_hf_model(const std::string& dir, const torch::Device& device) {
  LoadedModel out;
  out.config = read_hf_config(dir);
  const std::string file = join_path(dir, "model.safetensors");
  auto tensors = from_hf_tensors(load_tensor_file(file).tensors, out.config, file);
  if (out.config.architecture == kPretrainingArchitecture)
    out.pretraining = AlbertForPreTraining(out.config.model);
  else
    out.classification = AlbertForSequenceClassification(out.config.model, out.config.num_labels);
  load_state_dict(out.module(), tensors, file);
  out.module().to(device);
  return out;
}

AlbertForSequenceClassification load_for_classification(const std::string& dir, int64_t num_labels,
                                                        MissingHead missing_head, HfConfig* config_out) {
  auto config = read_hf_config(dir);
  if (config.architecture != kClassificationArchitecture && missing_head == MissingHead::kRefuse)
    throw Error(dir + " holds no trained classifier head (config.json: " + config.architecture +
                "), so its predictions would come from random weights; fine-tune it first with "
                "`tisa-train glue --init " + dir + "` and use <run>/<TASK>/seed-<s>/best");
  const std::string file = join_path(dir, "model.safetensors");
  auto tensors = from_hf_tensors(load_tensor_file(file).tensors, config, file);
  AlbertForSequenceClassification model(config.model, num_labels);
  if (config.architecture == kClassificationArchitecture) {
    if (config.num_labels != num_labels)
      throw Error(join_path(dir, "config.json") + ": the checkpoint has " + std::to_string(config.num_labels) +
                  " labels, the task needs " + std::to_string(num_labels));
    load_state_dict(*model, tensors, file);
  } else {
    TensorMap body;
    for (const auto& [name, t] : tensors)
      if (name.rfind("albert.", 0) == 0) body[name.substr(7)] = t;
    load_state_dict(*model->albert, body, file);
  }
  config.architecture = kClassificationArchitecture;
  config.num_labels = num_labels;
  if (config_out) *config_out = config;
  return model;
}

std::vector<std::string> copy_tokenizer_files(const std::string& src_dir, const std::string& dst_dir) {
  std::vector<std::string> copied;
  for (const char* name : kTokenizerFiles) {
    const auto src = join_path(src_dir, name);
    if (!fs::exists(src)) continue;
    if (fs::exists(dst_dir) && std::filesystem::equivalent(src_dir, dst_dir)) continue;
    fs::write_file_atomic(join_path(dst_dir, name), fs::read_file(src));
    copied.emplace_back(name);
  }
  return copied;
}

void save_hf_model(const std::string& dir, torch::nn::Module& model, const config::ModelConfig& config,
                   const std::string& architecture, int64_t num_labels, const std::string& tokenizer_dir) {
  fs::create_directories(dir);
  save_tensor_file(join_path(dir, "model.safetensors"), state_dict(model), {{"format", "pt"}});
  fs::write_file_atomic(join_path(dir, "config.json"), hf_config_json(config, architecture, num_labels));
  if (!plain_albert_expresses(config.position)) write_remote_code_files(dir);
  if (!tokenizer_dir.empty()) copy_tokenizer_files(tokenizer_dir, dir);
}

}  // namespace tisa::model
