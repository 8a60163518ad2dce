// Pair/single encoding with longest-first truncation (SPEC §6) and load_tokenizer().
#include "text/tokenizer.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "common/error.h"
#include "common/fs.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/wordpiece_tokenizer.h"

namespace tisa::text {

namespace {
void require_specials(const Tokenizer& tok) {
  const SpecialIds& s = tok.special_ids();
  if (s.cls < 0 || s.sep < 0)
    throw Error("tokenizer " + tok.identity() + " has no [CLS]/[SEP] token, so it cannot build model inputs");
}
}  // namespace

PairEncoding Tokenizer::build_pair(std::vector<int32_t> a, std::vector<int32_t> b, int64_t max_length) const {
  require_specials(*this);
  if (max_length < 3) throw Error("max_length " + std::to_string(max_length) + " is too small for a pair (needs >= 3)");
  const size_t budget = size_t(max_length - 3);
  // transformers' slow longest_first: one token at a time from the longer one; ties cut b.
  while (a.size() + b.size() > budget) {
    if (a.size() > b.size())
      a.pop_back();
    else
      b.pop_back();
  }
  const SpecialIds& s = special_ids();
  PairEncoding enc;
  enc.input_ids.reserve(a.size() + b.size() + 3);
  enc.input_ids.push_back(s.cls);
  enc.input_ids.insert(enc.input_ids.end(), a.begin(), a.end());
  enc.input_ids.push_back(s.sep);
  enc.token_type_ids.assign(enc.input_ids.size(), 0);
  enc.input_ids.insert(enc.input_ids.end(), b.begin(), b.end());
  enc.input_ids.push_back(s.sep);
  enc.token_type_ids.resize(enc.input_ids.size(), 1);
  return enc;
}

PairEncoding Tokenizer::build_single(std::vector<int32_t> a, int64_t max_length) const {
  require_specials(*this);
  if (max_length < 2) throw Error("max_length " + std::to_string(max_length) + " is too small (needs >= 2)");
  if (a.size() > size_t(max_length - 2)) a.resize(size_t(max_length - 2));
  const SpecialIds& s = special_ids();
  PairEncoding enc;
  enc.input_ids.reserve(a.size() + 2);
  enc.input_ids.push_back(s.cls);
  enc.input_ids.insert(enc.input_ids.end(), a.begin(), a.end());
  enc.input_ids.push_back(s.sep);
  enc.token_type_ids.assign(enc.input_ids.size(), 0);
  return enc;
}

PairEncoding Tokenizer::encode_pair(std::string_view a, std::string_view b, int64_t max_length) const {
  return build_pair(encode(a), encode(b), max_length);
}

PairEncoding Tokenizer::encode_single(std::string_view a, int64_t max_length) const {
  return build_single(encode(a), max_length);
}

// ---- loading ----

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::unique_ptr<Tokenizer> load_file(const std::string& path, const std::string& type, bool lowercase,
                                     bool keep_accents) {
  if (!std::filesystem::is_regular_file(path)) throw Error("tokenizer file " + path + " does not exist");
  if (type == "sentencepiece") {
    SentencePieceOptions o;
    o.lowercase = lowercase;
    o.keep_accents = keep_accents;
    return SentencePieceTokenizer::from_file(path, o);
  }
  WordPieceOptions o;
  o.lowercase = lowercase;
  o.keep_accents = keep_accents;
  return WordPieceTokenizer::from_file(path, o);
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, const TokenizerOptions& options) {
  namespace stdfs = std::filesystem;
  if (!stdfs::exists(path)) throw Error("tokenizer path " + path + " does not exist (expected a .model, a vocab.txt or a tokenizer directory)");
  bool lowercase = options.lowercase.value_or(true);
  bool keep_accents = options.keep_accents.value_or(false);
  if (!stdfs::is_directory(path)) {
    const std::string type = ends_with(path, ".model") ? "sentencepiece" : "wordpiece";
    return load_file(path, type, lowercase, keep_accents);
  }
  const std::string json_path = (stdfs::path(path) / kTokenizerJson).string();
  if (stdfs::exists(json_path)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(fs::read_file(json_path));
    } catch (const nlohmann::json::exception& e) {
      throw Error(json_path + ": not valid JSON: " + e.what());
    }
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string() || !j.contains("file") || !j["file"].is_string())
      throw Error(json_path + ": expected an object with string keys \"type\" and \"file\"");
    const std::string type = j["type"].get<std::string>();
    if (type != "sentencepiece" && type != "wordpiece")
      throw Error(json_path + ": type '" + type + "' is unknown (expected sentencepiece or wordpiece)");
    if (!options.lowercase && j.contains("lowercase")) lowercase = j["lowercase"].get<bool>();
    if (!options.keep_accents && j.contains("keep_accents")) keep_accents = j["keep_accents"].get<bool>();
    return load_file((stdfs::path(path) / j["file"].get<std::string>()).string(), type, lowercase, keep_accents);
  }
  std::vector<std::string> models;
  for (const auto& e : stdfs::directory_iterator(path))
    if (e.is_regular_file() && e.path().extension() == ".model") models.push_back(e.path().string());
  if (models.size() == 1) return load_file(models[0], "sentencepiece", lowercase, keep_accents);
  const std::string vocab = (stdfs::path(path) / "vocab.txt").string();
  if (models.empty() && stdfs::exists(vocab)) return load_file(vocab, "wordpiece", lowercase, keep_accents);
  throw Error("tokenizer directory " + path + " holds no " + kTokenizerJson +
              (models.size() > 1 ? " and several .model files" : ", no .model file and no vocab.txt"));
}

}  // namespace tisa::text
