// What a model folder was made from (issue 36): tisa_identity.json beside config.json records the
// identity of the tokenizer it was trained with, the hashes of the tokenizer files shipped with
// it and the pretraining dataset's identity. Whoever hands data or a tokenizer to a model
// (glue --init, eval, predict, eval-mlm, pretrain --init) compares with this record and refuses a
// mismatch naming both identities. Folders from elsewhere (an HF download) have no record:
// nothing can be compared, and the caller says so.
//   {"format": 1, "tokenizer": {"identity": "sentencepiece-…", "files": {"spiece.model": "<fnv1a64>"}},
//    "dataset": "dataset-…", "masking": {"masked_lm_prob": 0.15, "max_ngram": 3}}
// "masking" (pretraining folders) is how the model's MLM targets were drawn: evaluations of the
// model (eval-mlm) use it by default.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tisa::data {

inline constexpr const char* kModelIdentityName = "tisa_identity.json";

// How a pretraining run drew its MLM targets (data.masked_lm_prob, data.max_ngram).
struct MaskingRecord {
  double masked_lm_prob = 0.15;
  int64_t max_ngram = 3;
};

struct ModelIdentity {
  std::string tokenizer;                               // Tokenizer::identity() ("" when not known)
  std::map<std::string, std::string> tokenizer_files;  // tokenizer files in the folder: name → fs::file_hash_hex
  std::string dataset;                                 // pretraining dataset identity ("" when none)
  std::optional<MaskingRecord> masking;                // pretraining's masking (absent in older records)
};

// Writes `model_dir`/tisa_identity.json (atomically) with the hashes of the tokenizer files now
// in the folder (data::kTokenizerFileNames).
void write_model_identity(const std::string& model_dir, const std::string& tokenizer_identity,
                          const std::string& dataset_identity,
                          const std::optional<MaskingRecord>& masking = std::nullopt);
// The folder's record; nullopt when it has none. A damaged record is an error naming the file.
std::optional<ModelIdentity> read_model_identity(const std::string& model_dir);
// The record, after checking each recorded tokenizer file against its hash: a replaced or missing
// file is an error naming it and both hashes. nullopt (logged once per folder) when there is none.
std::optional<ModelIdentity> verified_model_identity(const std::string& model_dir);
// Throws, naming both identities, when the model's tokenizer (`model`'s record of `model_dir`)
// differs from that of `data_what` (a pretraining dataset): its tokenizer identity, or the hash of
// a tokenizer file both record. Nothing to compare when the model has no record.
void check_same_tokenizer(const std::optional<ModelIdentity>& model, const std::string& model_dir,
                          const std::string& data_tokenizer, const std::map<std::string, std::string>& data_files,
                          const std::string& data_what);

}  // namespace tisa::data
