// GLUE model adapter over model/albert.h and model/hf_checkpoint.h (see glue_model.h).
#include "glue/glue_model.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "data/glue_dataset.h"
#include "model/albert.h"
#include "model/hf_checkpoint.h"

namespace tisa::glue {
namespace {

namespace stdfs = std::filesystem;

nlohmann::json read_json(const std::string& path) {
  try {
    return nlohmann::json::parse(fs::read_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(path + ": invalid JSON: " + e.what());
  }
}

}  // namespace

std::string recorded_task(const std::string& model_dir) {
  const std::string path = (stdfs::path(model_dir) / "config.json").string();
  if (!fs::exists(path)) throw Error(model_dir + " has no config.json (not a model folder)");
  auto j = read_json(path);
  if (j.contains("finetuning_task") && j["finetuning_task"].is_string()) return j["finetuning_task"].get<std::string>();
  return "";
}

std::string find_tokenizer(const std::string& model_dir) {
  const stdfs::path dir(model_dir);
  if (stdfs::is_regular_file(dir / "tisa_tokenizer.json")) return dir.string();
  if (stdfs::is_regular_file(dir / "spiece.model")) return (dir / "spiece.model").string();
  if (stdfs::is_directory(dir))
    for (const auto& e : stdfs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".model") return e.path().string();
  if (stdfs::is_regular_file(dir / "vocab.txt")) return (dir / "vocab.txt").string();
  throw Error(model_dir + " holds no tokenizer (expected tisa_tokenizer.json, spiece.model, *.model or vocab.txt "
                          "beside config.json)");
}

std::string recorded_lowercase(const std::string& model_dir) {
  const std::string path = (stdfs::path(model_dir) / "tokenizer_config.json").string();
  if (!fs::exists(path)) return "";
  try {
    auto j = read_json(path);
    if (j.contains("do_lower_case") && j["do_lower_case"].is_boolean())
      return j["do_lower_case"].get<bool>() ? "true" : "false";
  } catch (const Error&) {
  }
  return "";
}

struct GlueModel::Impl {
  model::AlbertForSequenceClassification net{nullptr};
  config::ModelConfig config;
  c10::Device device{c10::DeviceType::CPU};
};

GlueModel::GlueModel(const std::string& model_dir, const GlueTaskInfo& task, double classifier_dropout,
                     c10::Device device, ClassifierHead head)
    : impl_(std::make_unique<Impl>()), task_(task) {
  model::HfConfig hf;
  const bool create = head == ClassifierHead::kCreateIfMissing;
  impl_->net = model::load_for_classification(
      model_dir, task.num_labels(), create ? model::MissingHead::kCreate : model::MissingHead::kRefuse, &hf);
  if (create && model::read_hf_config(model_dir).architecture != model::kClassificationArchitecture)
    spdlog::info("[glue] {} holds no classifier head: creating a new {} head ({} output{}) that this fine-tuning "
                 "trains",
                 model_dir, task.name, task.num_labels(), task.num_labels() == 1 ? "" : "s");
  impl_->config = hf.model;
  if (classifier_dropout >= 0) {
    impl_->net->dropout->options.p(classifier_dropout);
    impl_->config.classifier_dropout_prob = classifier_dropout;
  }
  impl_->device = device;
  impl_->net->to(device);
}

GlueModel::~GlueModel() = default;

at::Tensor GlueModel::forward(const GlueBatch& batch) {
  model::ForwardOptions options;
  options.head_outputs_only = true;  // the classifier reads the pooler alone: a sparse final layer
  return impl_->net->forward(batch.input_ids, batch.token_type_ids, batch.attention_mask, options).logits;  // [B, num_labels]
}

at::Tensor GlueModel::loss(const at::Tensor& logits, const GlueBatch& batch) const {
  TISA_CHECK(batch.labels.defined(), "loss of an unlabelled batch");
  return model::classification_loss(logits, batch.labels);
}

at::Tensor GlueModel::loss_sum(const at::Tensor& logits, const GlueBatch& batch) const {
  TISA_CHECK(batch.labels.defined(), "loss of an unlabelled batch");
  const auto& labels = batch.labels;
  if (logits.size(-1) == 1)  // regression: squared error (model::classification_loss's MSE, summed)
    return torch::mse_loss(logits.reshape({-1}).to(torch::kFloat),
                           labels.reshape({-1}).to(logits.device(), torch::kFloat), at::Reduction::Sum);
  return torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}).to(torch::kFloat), labels.reshape({-1}).to(logits.device(), torch::kLong),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
}

std::vector<std::pair<std::string, at::Tensor>> GlueModel::named_parameters() {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& item : impl_->net->named_parameters(/*recurse=*/true)) out.emplace_back(item.key(), item.value());
  return out;
}

void GlueModel::train(bool on) { impl_->net->train(on); }
int64_t GlueModel::pad_token_id() const { return impl_->config.pad_token_id; }
int64_t GlueModel::vocab_size() const { return impl_->config.vocab_size; }
int64_t GlueModel::max_positions() const { return impl_->config.max_position_embeddings; }

void GlueModel::save(const std::string& dir, const std::string& tokenizer_dir, int64_t max_length) const {
  fs::create_directories(dir);
  model::save_hf_model(dir, *impl_->net, impl_->config, model::kClassificationArchitecture, task_.num_labels(),
                       tokenizer_dir);
  // Our own tokenizer description (and the file it names) travels too.
  const stdfs::path src(tokenizer_dir);
  if (stdfs::is_regular_file(src / "tisa_tokenizer.json")) {
    auto tj = read_json((src / "tisa_tokenizer.json").string());
    std::vector<std::string> names = {"tisa_tokenizer.json"};
    if (tj.contains("file") && tj["file"].is_string()) names.push_back(tj["file"].get<std::string>());
    for (const auto& n : names)
      if (stdfs::is_regular_file(src / n) && !stdfs::exists(stdfs::path(dir) / n))
        stdfs::copy_file(src / n, stdfs::path(dir) / n);
  }
  // The task, as HF records it, so that eval/predict know what the model predicts.
  const std::string cfg_path = (stdfs::path(dir) / "config.json").string();
  auto j = read_json(cfg_path);
  j["finetuning_task"] = task_.name;
  j["num_labels"] = task_.num_labels();
  nlohmann::json id2label = nlohmann::json::object(), label2id = nlohmann::json::object();
  if (task_.regression) {
    id2label["0"] = "LABEL_0";
    label2id["LABEL_0"] = 0;
  } else {
    for (size_t i = 0; i < task_.labels.size(); ++i) {
      id2label[std::to_string(i)] = task_.labels[i];
      label2id[task_.labels[i]] = i;
    }
  }
  j["id2label"] = id2label;
  j["label2id"] = label2id;
  if (task_.regression) j["problem_type"] = "regression";
  j["tisa_train_glue"] = {{"max_length", max_length}};
  fs::write_file_atomic(cfg_path, j.dump(2) + "\n");
}

void check_data_fits_model(const GlueModel& model, const std::string& model_dir, const std::string& prepared_dir) {
  const auto manifest = data::read_glue_manifest(prepared_dir);
  if (manifest.vocab_size > model.vocab_size())
    throw Error(prepared_dir + ": the data was tokenised with a vocabulary of " + std::to_string(manifest.vocab_size) +
                " tokens but the model in " + model_dir + " has " + std::to_string(model.vocab_size()) +
                " (wrong tokenizer for this model?)");
  if (manifest.max_length > model.max_positions())
    throw Error(prepared_dir + ": the data was prepared with max_length " + std::to_string(manifest.max_length) +
                " but the model in " + model_dir + " has only " + std::to_string(model.max_positions()) +
                " positions (max_position_embeddings)");
}

void check_split_fits_model(const GlueModel& model, const data::GlueEncodedSplit& split) {
  const std::string what = split.task + " " + split.split + " (prepared data)";
  for (size_t i = 0; i < split.size(); ++i)
    if (split.length(i) > model.max_positions())
      throw Error(what + ": example " + std::to_string(i) + " has " + std::to_string(split.length(i)) +
                  " tokens, more than the model's " + std::to_string(model.max_positions()) + " positions");
  for (size_t k = 0; k < split.input_ids.size(); ++k)
    if (split.input_ids[k] < 0 || split.input_ids[k] >= model.vocab_size() || split.token_type_ids[k] > 1)
      throw Error(what + ": token " + std::to_string(k) + " (id " + std::to_string(split.input_ids[k]) + ", type " +
                  std::to_string(split.token_type_ids[k]) + ") lies outside the model's vocabulary [0, " +
                  std::to_string(model.vocab_size()) + ") or token types {0, 1}; re-run `tisa-train prepare glue`");
}

}  // namespace tisa::glue
