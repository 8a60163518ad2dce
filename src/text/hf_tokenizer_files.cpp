// tokenizer_config.json + special_tokens_map.json; see hf_tokenizer_files.h.
#include "text/hf_tokenizer_files.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::text {
namespace {

using nlohmann::json;

// {"pad_token": "<pad>", …}: the tokenizer's own pieces for the special ids it has.
json special_tokens(const Tokenizer& tok) {
  const SpecialIds& s = tok.special_ids();
  json j = json::object();
  auto put = [&](const char* key, int32_t id) {
    if (id >= 0) j[key] = tok.id_to_piece(id);
  };
  put("pad_token", s.pad);
  put("unk_token", s.unk);
  put("cls_token", s.cls);
  put("sep_token", s.sep);
  put("mask_token", s.mask);
  return j;
}

}  // namespace

std::string hf_tokenizer_config_json(const Tokenizer& tok, const HfTokenizerSettings& o) {
  json j = special_tokens(tok);
  if (o.type == "sentencepiece") {
    // AlbertTokenizer: lowercases when do_lower_case, strips accents unless keep_accents.
    j["tokenizer_class"] = "AlbertTokenizer";
    j["auto_map"] = {{"AutoTokenizer", json::array({"tokenization_tisa_albert.TisaAlbertTokenizer", nullptr})}};
    j["do_lower_case"] = o.lowercase;
    j["keep_accents"] = o.keep_accents;
    j["remove_space"] = true;
    if (j.contains("cls_token")) j["bos_token"] = j["cls_token"];
    if (j.contains("sep_token")) j["eos_token"] = j["sep_token"];
  } else if (o.type == "wordpiece") {
    // BertTokenizer: accents are stripped exactly when lowercasing without keep_accents (ours).
    j["tokenizer_class"] = "BertTokenizer";
    j["do_lower_case"] = o.lowercase;
    j["strip_accents"] = o.lowercase && !o.keep_accents;
    j["tokenize_chinese_chars"] = true;
  } else {
    throw Error("tokenizer type '" + o.type + "' has no Hugging Face form (expected sentencepiece or wordpiece)");
  }
  j["model_max_length"] = o.model_max_length;
  return j.dump(2) + "\n";
}

std::string hf_special_tokens_map_json(const Tokenizer& tok) { return special_tokens(tok).dump(2) + "\n"; }

void write_hf_tokenizer_files(const std::string& dir, const Tokenizer& tok, const HfTokenizerSettings& settings) {
  const std::filesystem::path d(dir);
  fs::write_file_atomic((d / "tokenizer_config.json").string(), hf_tokenizer_config_json(tok, settings));
  fs::write_file_atomic((d / "special_tokens_map.json").string(), hf_special_tokens_map_json(tok));
  if (settings.type == "sentencepiece")
    for (const auto& file : hf_tokenizer_code_files()) fs::write_file_atomic((d / file.name).string(), file.text);
}

}  // namespace tisa::text
