// Reader and writer of tokenised GLUE splits (format in glue_dataset.h).
#include "data/glue_dataset.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::data {
namespace {

constexpr char kMagic[8] = {'T', 'I', 'S', 'A', 'G', 'L', 'U', 'E'};

template <class T>
void append_raw(std::string& out, const std::vector<T>& v) {
  if (v.empty()) return;
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

template <class T>
void append_pod(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// Cursor over a file's bytes with bounds checks that name the file.
struct Reader {
  const std::string& path;
  const std::string& bytes;
  size_t pos = 0;
  void need(size_t n) const {
    if (pos + n > bytes.size())
      throw Error(path + ": truncated GLUE dataset file (expected at least " + std::to_string(pos + n) +
                  " bytes, found " + std::to_string(bytes.size()) + "); re-run `tisa-train prepare glue`");
  }
  template <class T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  template <class T>
  std::vector<T> array(size_t n) {
    need(n * sizeof(T));
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), bytes.data() + pos, n * sizeof(T));
    pos += n * sizeof(T);
    return v;
  }
};

}  // namespace

void GlueEncodedSplit::add(const std::vector<int32_t>& ids, const std::vector<int32_t>& types, float label,
                           int64_t index, int64_t line) {
  TISA_CHECK(ids.size() == types.size(), "ids and token types differ in length");
  input_ids.insert(input_ids.end(), ids.begin(), ids.end());
  for (int32_t t : types) token_type_ids.push_back(static_cast<uint8_t>(t));
  offsets.push_back(input_ids.size());
  labels.push_back(label);
  indices.push_back(index);
  lines.push_back(line);
}

void write_glue_split(const std::string& path, const GlueEncodedSplit& s) {
  const size_t n = s.labels.size();
  TISA_CHECK(s.offsets.size() == n + 1 && s.indices.size() == n && s.lines.size() == n,
             "inconsistent GLUE split arrays for " + path);
  TISA_CHECK(s.input_ids.size() == s.offsets.back() && s.token_type_ids.size() == s.input_ids.size(),
             "inconsistent GLUE token arrays for " + path);
  nlohmann::json header = {{"task", s.task},
                           {"split", s.split},
                           {"examples", n},
                           {"tokens", s.input_ids.size()},
                           {"has_labels", s.has_labels},
                           {"regression", s.regression},
                           {"max_length", s.max_length},
                           {"tokenizer_identity", s.tokenizer_identity}};
  std::string h = header.dump();
  std::string out;
  out.reserve(16 + h.size() + s.offsets.size() * 8 + s.input_ids.size() * 5 + n * 20);
  out.append(kMagic, sizeof(kMagic));
  append_pod<uint32_t>(out, kGlueSplitVersion);
  append_pod<uint32_t>(out, static_cast<uint32_t>(h.size()));
  out += h;
  append_raw(out, s.offsets);
  append_raw(out, s.input_ids);
  append_raw(out, s.token_type_ids);
  append_raw(out, s.labels);
  append_raw(out, s.indices);
  append_raw(out, s.lines);
  fs::write_file_atomic(path, out);
}

GlueEncodedSplit read_glue_split(const std::string& path) {
  std::string bytes = fs::read_file(path);
  Reader r{path, bytes};
  r.need(sizeof(kMagic));
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error(path + ": not a tisa GLUE dataset file (bad magic); re-run `tisa-train prepare glue`");
  r.pos = sizeof(kMagic);
  uint32_t version = r.pod<uint32_t>();
  if (version != kGlueSplitVersion)
    throw Error(path + ": GLUE dataset version " + std::to_string(version) + ", this build reads version " +
                std::to_string(kGlueSplitVersion) + "; re-run `tisa-train prepare glue`");
  uint32_t hlen = r.pod<uint32_t>();
  r.need(hlen);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(r.pos, hlen));
  } catch (const std::exception& e) {
    throw Error(path + ": corrupt GLUE dataset header: " + e.what());
  }
  r.pos += hlen;
  GlueEncodedSplit s;
  size_t n = 0, tokens = 0;
  try {
    s.task = header.at("task").get<std::string>();
    s.split = header.at("split").get<std::string>();
    n = header.at("examples").get<size_t>();
    tokens = header.at("tokens").get<size_t>();
    s.has_labels = header.at("has_labels").get<bool>();
    s.regression = header.at("regression").get<bool>();
    s.max_length = header.at("max_length").get<int64_t>();
    s.tokenizer_identity = header.at("tokenizer_identity").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": GLUE dataset header lacks a field: " + e.what());
  }
  s.offsets = r.array<uint64_t>(n + 1);
  if (s.offsets.front() != 0 || s.offsets.back() != tokens)
    throw Error(path + ": corrupt GLUE dataset (offsets do not span the tokens)");
  for (size_t i = 0; i < n; ++i)
    if (s.offsets[i + 1] < s.offsets[i]) throw Error(path + ": corrupt GLUE dataset (offsets decrease)");
  s.input_ids = r.array<int32_t>(tokens);
  s.token_type_ids = r.array<uint8_t>(tokens);
  s.labels = r.array<float>(n);
  s.indices = r.array<int64_t>(n);
  s.lines = r.array<int64_t>(n);
  if (r.pos != bytes.size())
    throw Error(path + ": " + std::to_string(bytes.size() - r.pos) + " unexpected trailing bytes");
  return s;
}

GlueManifest read_glue_manifest(const std::string& dir) {
  std::string path = (std::filesystem::path(dir) / kGlueManifestName).string();
  if (!fs::exists(path))
    throw Error(path + " not found: " + dir + " is not a prepared GLUE folder (run `tisa-train prepare glue`)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(fs::read_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(path + ": invalid JSON: " + e.what());
  }
  GlueManifest m;
  try {
    if (j.at("format").get<std::string>() != "tisa-glue") throw Error(path + ": not a tisa GLUE manifest");
    m.task = j.at("task").get<std::string>();
    m.cache_key = j.at("cache_key").get<std::string>();
    m.max_length = j.at("max_length").get<int64_t>();
    const auto& tok = j.at("tokenizer");
    m.tokenizer_identity = tok.at("identity").get<std::string>();
    m.tokenizer_type = tok.at("type").get<std::string>();
    m.vocab_size = tok.at("vocab_size").get<int64_t>();
    m.pad_id = tok.at("pad").get<int32_t>();
    for (const auto& s : j.at("split_order")) {
      std::string name = s.get<std::string>();
      m.splits.push_back(name);
      m.examples.push_back(j.at("splits").at(name).at("examples").get<int64_t>());
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": manifest lacks a field: " + e.what() + " (re-run `tisa-train prepare glue`)");
  }
  return m;
}

std::string glue_split_path(const std::string& dir, const std::string& split) {
  GlueManifest m = read_glue_manifest(dir);
  for (const auto& s : m.splits)
    if (s == split) return (std::filesystem::path(dir) / (split + ".bin")).string();
  std::string known;
  for (const auto& s : m.splits) known += (known.empty() ? "" : ", ") + s;
  throw Error(dir + ": the prepared " + m.task + " data has no split '" + split + "' (has: " + known + ")");
}

}  // namespace tisa::data
