// Writer and memory-mapping reader of the binary pretraining dataset (format in the header).
#include "data/pretrain_dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::data {
namespace {

constexpr char kBinMagic[8] = {'T', 'I', 'S', 'A', 'P', 'R', 'E', '1'};
constexpr size_t kBinHeaderBytes = 32;
constexpr const char* kRerun =
    "re-run `tisa-train prepare pretrain --input ... --tokenizer ... --output <dir>` to rebuild it";

std::string bin_path(const std::string& dir, const std::string& split, const char* kind) {
  return dir + "/" + split + "." + kind + ".bin";
}

int split_index(const std::string& split) {
  if (split == "train") return 0;
  if (split == "valid") return 1;
  throw Error("pretraining dataset: unknown split '" + split + "' (expected train or valid)");
}

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw Error("pretraining dataset file " + path + ": " + what + "; " + kRerun);
}

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Payload bytes: count elements of element_bytes each, or ceil(count / 8) for a bit file.
uint64_t payload_bytes(uint32_t element_bytes, uint64_t count, bool bits) {
  return bits ? (count + 7) / 8 : count * element_bytes;
}

// One buffered output file with the 32-byte header patched at close. Written as <path>.tmp and
// renamed at close, so a process that still maps the old file keeps a valid mapping (truncating
// a mapped file in place would kill it with SIGBUS).
class BinOut {
 public:
  BinOut(std::string path, uint32_t element_bytes)
      : final_path_(std::move(path)), path_(final_path_ + ".tmp"), element_bytes_(element_bytes) {
    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) throw Error("cannot create " + path_ + ": " + std::strerror(errno));
    uint8_t zeros[kBinHeaderBytes] = {};
    write(zeros, sizeof zeros);
    hashing_ = true;  // the manifest hashes the payload: the 32-byte header is patched at close
  }
  ~BinOut() {
    if (f_) {
      std::fclose(f_);
      std::remove(path_.c_str());
    }
  }
  void write(const void* data, size_t bytes) {
    if (bytes && std::fwrite(data, 1, bytes, f_) != bytes)
      throw Error("cannot write " + path_ + ": " + std::strerror(errno));
    if (hashing_) {
      hash_ = fs::fnv1a64(std::string_view(static_cast<const char*>(data), bytes), hash_);
      payload_bytes_ += bytes;
    }
  }
  template <typename T>
  void put(T v) { write(&v, sizeof v); }  // little-endian hosts only (x86-64, aarch64)
  void close(uint64_t count) {
    hashing_ = false;
    uint8_t h[kBinHeaderBytes] = {};
    std::memcpy(h, kBinMagic, 8);
    put_u32(h + 8, kPretrainFormatVersion);
    put_u32(h + 12, element_bytes_);
    put_u64(h + 16, count);
    if (std::fseek(f_, 0, SEEK_SET) != 0) throw Error("cannot seek " + path_);
    write(h, sizeof h);
    if (std::fflush(f_) != 0 || ::fsync(fileno(f_)) != 0)
      throw Error("cannot flush " + path_ + ": " + std::strerror(errno));
    std::fclose(f_);
    f_ = nullptr;
    if (std::rename(path_.c_str(), final_path_.c_str()) != 0)
      throw Error("cannot rename " + path_ + " to " + final_path_ + ": " + std::strerror(errno));
  }

  // The manifest entry of the closed file: {"bytes": file size, "fnv1a64": hash of the payload}.
  nlohmann::json manifest_entry() const {
    return {{"bytes", payload_bytes_ + kBinHeaderBytes}, {"fnv1a64", fs::to_hex(hash_)}};
  }
  std::string name() const { return final_path_.substr(final_path_.find_last_of('/') + 1); }

 private:
  std::string final_path_, path_;
  uint32_t element_bytes_;
  std::FILE* f_ = nullptr;
  bool hashing_ = false;
  uint64_t hash_ = 0xcbf29ce484222325ULL, payload_bytes_ = 0;
};

}  // namespace

std::string token_dtype_for_vocab(int64_t vocab_size) {
  return vocab_size <= 65536 ? "uint16" : "int32";
}

const SplitCounts& PretrainHeader::counts(const std::string& split) const {
  return split_index(split) == 0 ? train : valid;
}

// ------------------------------------------------------------------------------------ writer
struct PretrainDatasetWriter::SplitFiles {
  BinOut tokens, words, sentences, documents;
  SplitCounts counts;
  uint8_t bit_byte = 0;
  std::vector<uint8_t> token_buf, word_buf;  // one sentence's bytes before they are written
  SplitFiles(const std::string& dir, const std::string& split, bool u16)
      : tokens(bin_path(dir, split, "tokens"), u16 ? 2 : 4),
        words(bin_path(dir, split, "wordstart"), 1),
        sentences(bin_path(dir, split, "sentences"), 8),
        documents(bin_path(dir, split, "documents"), 8) {
    sentences.put<int64_t>(0);
    documents.put<int64_t>(0);
  }
};

PretrainDatasetWriter::PretrainDatasetWriter(std::string dir, DatasetTokenizerInfo tokenizer,
                                             nlohmann::json created)
    : dir_(std::move(dir)), tokenizer_(std::move(tokenizer)), created_(std::move(created)) {
  if (tokenizer_.vocab_size <= 0) throw Error("pretraining dataset: vocab_size must be positive");
  uint16_ = token_dtype_for_vocab(tokenizer_.vocab_size) == "uint16";
  fs::create_directories(dir_);
  // An old header must not describe the new, half-written files.
  std::remove((dir_ + "/" + kPretrainHeaderName).c_str());
  for (int i = 0; i < 2; ++i) splits_[i] = std::make_unique<SplitFiles>(dir_, kPretrainSplitNames[i], uint16_);
}

PretrainDatasetWriter::~PretrainDatasetWriter() = default;

PretrainDatasetWriter::SplitFiles& PretrainDatasetWriter::files(const std::string& split) {
  return *splits_[split_index(split)];
}

const SplitCounts& PretrainDatasetWriter::counts(const std::string& split) const {
  return splits_[split_index(split)]->counts;
}

void PretrainDatasetWriter::add_document(const std::string& split, const DocumentTokens& document) {
  if (finished_) throw Error("pretraining dataset writer: add_document after finish");
  SplitFiles& f = files(split);
  int64_t sentences_added = 0;
  for (const SentenceTokens& s : document) {
    if (s.ids.empty()) continue;
    if (s.word_start.size() != s.ids.size())
      throw Error("pretraining dataset writer: word_start and ids differ in length");
    // One write per sentence and file (a write per token made fwrite a tenth of `prepare`).
    f.token_buf.clear();
    f.word_buf.clear();
    for (size_t i = 0; i < s.ids.size(); ++i) {
      const int32_t id = s.ids[i];
      if (id < 0 || id >= tokenizer_.vocab_size)
        throw Error("pretraining dataset writer: token id " + std::to_string(id) +
                    " outside the vocabulary [0, " + std::to_string(tokenizer_.vocab_size) + ")");
      if (uint16_) {
        const auto v = static_cast<uint16_t>(id);
        f.token_buf.insert(f.token_buf.end(), reinterpret_cast<const uint8_t*>(&v),
                           reinterpret_cast<const uint8_t*>(&v) + 2);
      } else {
        f.token_buf.insert(f.token_buf.end(), reinterpret_cast<const uint8_t*>(&id),
                           reinterpret_cast<const uint8_t*>(&id) + 4);
      }
      const int64_t t = f.counts.tokens + static_cast<int64_t>(i);
      if (s.word_start[i]) f.bit_byte |= static_cast<uint8_t>(1u << (t & 7));
      if ((t & 7) == 7) {
        f.word_buf.push_back(f.bit_byte);
        f.bit_byte = 0;
      }
    }
    f.tokens.write(f.token_buf.data(), f.token_buf.size());
    f.words.write(f.word_buf.data(), f.word_buf.size());
    f.counts.tokens += static_cast<int64_t>(s.ids.size());
    f.sentences.put<int64_t>(f.counts.tokens);
    ++f.counts.sentences;
    ++sentences_added;
  }
  if (sentences_added == 0) return;
  f.documents.put<int64_t>(f.counts.sentences);
  ++f.counts.documents;
}

PretrainHeader PretrainDatasetWriter::finish() {
  if (finished_) throw Error("pretraining dataset writer: finish called twice");
  finished_ = true;
  PretrainHeader header;
  header.token_dtype = uint16_ ? "uint16" : "int32";
  header.tokenizer = tokenizer_;
  header.created = created_;
  for (int i = 0; i < 2; ++i) {
    SplitFiles& f = *splits_[i];
    if (f.counts.tokens & 7) f.words.put<uint8_t>(f.bit_byte);
    f.tokens.close(static_cast<uint64_t>(f.counts.tokens));
    f.words.close(static_cast<uint64_t>(f.counts.tokens));
    f.sentences.close(static_cast<uint64_t>(f.counts.sentences + 1));
    f.documents.close(static_cast<uint64_t>(f.counts.documents + 1));
    (i == 0 ? header.train : header.valid) = f.counts;
  }
  const auto& sp = tokenizer_.special_ids;
  auto split_json = [](const SplitCounts& c) {
    return nlohmann::json{{"tokens", c.tokens}, {"sentences", c.sentences}, {"documents", c.documents}};
  };
  nlohmann::json j = {
      {"magic", kPretrainMagic},
      {"format_version", kPretrainFormatVersion},
      {"token_dtype", header.token_dtype},
      {"tokenizer",
       {{"identity", tokenizer_.identity},
        {"type", tokenizer_.type},
        {"vocab_size", tokenizer_.vocab_size},
        {"special_ids",
         {{"pad", sp.pad}, {"unk", sp.unk}, {"cls", sp.cls}, {"sep", sp.sep}, {"mask", sp.mask}}}}},
      {"splits", {{"train", split_json(header.train)}, {"valid", split_json(header.valid)}}},
      {"created", created_.is_null() ? nlohmann::json::object() : created_},
  };
  nlohmann::json files = nlohmann::json::object();
  for (int i = 0; i < 2; ++i)
    for (const BinOut* f : {&splits_[i]->tokens, &splits_[i]->words, &splits_[i]->sentences, &splits_[i]->documents}) {
      files[f->name()] = f->manifest_entry();
      header.file_hashes[f->name()] = f->manifest_entry()["fnv1a64"];
    }
  header.tokenizer_files = tokenizer_file_hashes(dir_);
  j["manifest"] = {{"files", files}, {"tokenizer_files", header.tokenizer_files}};
  header.has_manifest = true;
  header.identity = dataset_identity(j);
  j["identity"] = header.identity;
  fs::write_file_atomic(dir_ + "/" + kPretrainHeaderName, j.dump(2) + "\n");
  return header;
}

// ---------------------------------------------------------------------------- sharded writer
namespace {

nlohmann::json tokenizer_json(const DatasetTokenizerInfo& t) {
  const auto& sp = t.special_ids;
  return {{"identity", t.identity},
          {"type", t.type},
          {"vocab_size", t.vocab_size},
          {"special_ids", {{"pad", sp.pad}, {"unk", sp.unk}, {"cls", sp.cls}, {"sep", sp.sep}, {"mask", sp.mask}}}};
}

nlohmann::json counts_json(const SplitCounts& c) {
  return {{"tokens", c.tokens}, {"sentences", c.sentences}, {"documents", c.documents}};
}

std::string shard_name(size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "shards/%05zu", index);
  return name;
}

}  // namespace

PretrainHeader write_sharded_header(const std::string& dir, const DatasetTokenizerInfo& tokenizer,
                                    const std::vector<ShardRecord>& shards, const nlohmann::json& created) {
  PretrainHeader h;
  h.format_version = kShardedFormatVersion;
  h.token_dtype = token_dtype_for_vocab(tokenizer.vocab_size);
  h.tokenizer = tokenizer;
  h.created = created.is_null() ? nlohmann::json::object() : created;
  h.shards = shards;
  nlohmann::json list = nlohmann::json::array();
  for (const ShardRecord& r : shards) {
    list.push_back({{"path", r.path},
                    {"identity", r.identity},
                    {"splits", {{"train", counts_json(r.train)}, {"valid", counts_json(r.valid)}}}});
    for (auto [total, part] : {std::pair{&h.train, &r.train}, std::pair{&h.valid, &r.valid}}) {
      total->tokens += part->tokens;
      total->sentences += part->sentences;
      total->documents += part->documents;
    }
  }
  h.tokenizer_files = tokenizer_file_hashes(dir);
  h.has_manifest = true;
  nlohmann::json j = {{"magic", kPretrainMagic},
                      {"format_version", kShardedFormatVersion},
                      {"token_dtype", h.token_dtype},
                      {"tokenizer", tokenizer_json(tokenizer)},
                      {"splits", {{"train", counts_json(h.train)}, {"valid", counts_json(h.valid)}}},
                      {"created", h.created},
                      {"shards", list},
                      {"manifest", {{"tokenizer_files", h.tokenizer_files}}}};
  h.identity = dataset_identity(j);
  j["identity"] = h.identity;
  fs::write_file_atomic(dir + "/" + kPretrainHeaderName, j.dump(2) + "\n");
  return h;
}

ShardedDatasetWriter::ShardedDatasetWriter(std::string dir, DatasetTokenizerInfo tokenizer, nlohmann::json created,
                                           int64_t shard_tokens)
    : dir_(std::move(dir)), tokenizer_(std::move(tokenizer)), created_(std::move(created)),
      shard_tokens_(shard_tokens) {
  if (shard_tokens_ <= 0) throw Error("pretraining dataset: shard size must be positive");
  fs::create_directories(dir_);
  std::remove((dir_ + "/" + kPretrainHeaderName).c_str());  // no header may describe half-written shards
}

ShardedDatasetWriter::~ShardedDatasetWriter() = default;

void ShardedDatasetWriter::add_document(const std::string& split, const DocumentTokens& document) {
  if (finished_) throw Error("pretraining dataset writer: add_document after finish");
  if (!shard_) {
    const std::string name = shard_name(shards_.size());
    shard_ = std::make_unique<PretrainDatasetWriter>(dir_ + "/" + name, tokenizer_,
                                                     nlohmann::json{{"shard_of", "tisa-train prepare pretrain"}});
  }
  shard_->add_document(split, document);
  if (shard_->counts("train").tokens + shard_->counts("valid").tokens >= shard_tokens_) close_shard();
}

void ShardedDatasetWriter::close_shard() {
  if (!shard_) return;
  const PretrainHeader h = shard_->finish();
  shards_.push_back({shard_name(shards_.size()), h.identity, h.train, h.valid});
  for (int i = 0; i < 2; ++i) {
    const SplitCounts& c = i == 0 ? h.train : h.valid;
    totals_[i].tokens += c.tokens;
    totals_[i].sentences += c.sentences;
    totals_[i].documents += c.documents;
  }
  shard_.reset();
}

SplitCounts ShardedDatasetWriter::counts(const std::string& split) const {
  SplitCounts c = totals_[split_index(split)];
  if (shard_) {
    const SplitCounts& open = shard_->counts(split);
    c.tokens += open.tokens;
    c.sentences += open.sentences;
    c.documents += open.documents;
  }
  return c;
}

PretrainHeader ShardedDatasetWriter::finish() {
  if (finished_) throw Error("pretraining dataset writer: finish called twice");
  finished_ = true;
  close_shard();
  if (shards_.empty()) throw Error("pretraining dataset " + dir_ + ": no document was written");
  return write_sharded_header(dir_, tokenizer_, shards_, created_);
}

// ------------------------------------------------------------------------------------ reader
MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error("cannot open pretraining dataset file " + path + ": " + std::strerror(errno) + "; " + kRerun);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error("cannot stat " + path + ": " + std::strerror(errno));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw Error("cannot mmap " + path + ": " + std::strerror(errno));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

namespace {

const nlohmann::json& need(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.is_object() || !j.contains(key))
    throw Error(path + ": missing key '" + key + "'; " + kRerun);
  return j.at(key);
}

SplitCounts parse_counts(const nlohmann::json& j, const std::string& path) {
  SplitCounts c;
  c.tokens = need(j, "tokens", path).get<int64_t>();
  c.sentences = need(j, "sentences", path).get<int64_t>();
  c.documents = need(j, "documents", path).get<int64_t>();
  if (c.tokens < 0 || c.sentences < 0 || c.documents < 0) throw Error(path + ": negative count; " + kRerun);
  return c;
}

// Maps a .bin file and checks its header against what header.json says and its payload against
// the manifest's hash (`hash` empty: not recorded); returns the payload.
const uint8_t* map_bin(std::vector<std::unique_ptr<MappedFile>>& files, const std::string& path,
                       uint32_t element_bytes, uint64_t count, bool bits, const std::string& hash) {
  files.push_back(std::make_unique<MappedFile>(path));
  const MappedFile& f = *files.back();
  if (f.size() < kBinHeaderBytes)
    corrupt(path, "file is " + std::to_string(f.size()) + " bytes, shorter than its 32-byte header (truncated)");
  const uint8_t* h = f.data();
  if (std::memcmp(h, kBinMagic, 8) != 0) corrupt(path, "bad magic (not a tisa-pretrain .bin file)");
  const uint32_t version = get_u32(h + 8);
  if (version != kPretrainFormatVersion)
    corrupt(path, "format version " + std::to_string(version) + ", this build reads version " +
                      std::to_string(kPretrainFormatVersion));
  if (get_u32(h + 12) != element_bytes)
    corrupt(path, "element size " + std::to_string(get_u32(h + 12)) + " bytes, expected " +
                      std::to_string(element_bytes) + " (token dtype differs from header.json)");
  const uint64_t n = get_u64(h + 16);
  if (n != count)
    corrupt(path, "holds " + std::to_string(n) + " elements but header.json implies " + std::to_string(count));
  const uint64_t want = kBinHeaderBytes + payload_bytes(element_bytes, count, bits);
  if (f.size() != want)
    corrupt(path, "file is " + std::to_string(f.size()) + " bytes, expected " + std::to_string(want) +
                      (f.size() < want ? " (truncated)" : " (trailing bytes)"));
  if (!hash.empty()) {
    const std::string got = fs::to_hex(
        fs::fnv1a64(std::string_view(reinterpret_cast<const char*>(h + kBinHeaderBytes), f.size() - kBinHeaderBytes)));
    if (got != hash)
      corrupt(path, "its content hashes to " + got + " but header.json's manifest records " + hash +
                        " (the file was changed or replaced after preparation)");
  }
  return h + kBinHeaderBytes;
}

}  // namespace

PretrainHeader read_pretrain_header(const std::string& dir) {
  const std::string path = dir + "/" + kPretrainHeaderName;
  if (!fs::exists(path))
    throw Error("no pretraining dataset at " + dir + " (" + kPretrainHeaderName + " is missing); " + kRerun);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(fs::read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not valid JSON (" + e.what() + "); " + kRerun);
  }
  PretrainHeader h;
  try {
    const std::string magic = need(j, "magic", path).get<std::string>();
    if (magic != kPretrainMagic)
      throw Error(path + ": magic is '" + magic + "', expected '" + kPretrainMagic + "'; " + kRerun);
    h.format_version = need(j, "format_version", path).get<uint32_t>();
    if (h.format_version != kPretrainFormatVersion && h.format_version != kShardedFormatVersion)
      throw Error(path + ": format_version " + std::to_string(h.format_version) + ", this build reads " +
                  std::to_string(kPretrainFormatVersion) + " and " + std::to_string(kShardedFormatVersion) + "; " +
                  kRerun);
    h.token_dtype = need(j, "token_dtype", path).get<std::string>();
    const auto& t = need(j, "tokenizer", path);
    h.tokenizer.identity = need(t, "identity", path).get<std::string>();
    h.tokenizer.type = need(t, "type", path).get<std::string>();
    h.tokenizer.vocab_size = need(t, "vocab_size", path).get<int64_t>();
    const auto& sp = need(t, "special_ids", path);
    h.tokenizer.special_ids.pad = need(sp, "pad", path).get<int32_t>();
    h.tokenizer.special_ids.unk = need(sp, "unk", path).get<int32_t>();
    h.tokenizer.special_ids.cls = need(sp, "cls", path).get<int32_t>();
    h.tokenizer.special_ids.sep = need(sp, "sep", path).get<int32_t>();
    h.tokenizer.special_ids.mask = need(sp, "mask", path).get<int32_t>();
    if (h.token_dtype != token_dtype_for_vocab(h.tokenizer.vocab_size))
      throw Error(path + ": token_dtype '" + h.token_dtype + "' does not match vocab_size " +
                  std::to_string(h.tokenizer.vocab_size) + "; " + kRerun);
    const auto& splits = need(j, "splits", path);
    h.train = parse_counts(need(splits, "train", path), path);
    h.valid = parse_counts(need(splits, "valid", path), path);
    if (j.contains("created")) h.created = j.at("created");
    if (h.format_version == kShardedFormatVersion) {
      h.identity = need(j, "identity", path).get<std::string>();
      const std::string content = dataset_identity(j);
      if (content != h.identity)
        throw Error(path + ": records identity " + h.identity + " but its content is " + content +
                    ": header.json was edited after preparation; " + kRerun);
      for (const auto& shard : need(j, "shards", path)) {
        ShardRecord r;
        r.path = need(shard, "path", path).get<std::string>();
        if (r.path.empty() || r.path[0] == '/' || r.path.find("..") != std::string::npos)
          throw Error(path + ": shard path '" + r.path + "' must lie inside the dataset folder; " + kRerun);
        r.identity = need(shard, "identity", path).get<std::string>();
        const auto& sp = need(shard, "splits", path);
        r.train = parse_counts(need(sp, "train", path), path);
        r.valid = parse_counts(need(sp, "valid", path), path);
        h.shards.push_back(r);
      }
      if (h.shards.empty()) throw Error(path + ": lists no shards; " + kRerun);
      h.tokenizer_files =
          need(need(j, "manifest", path), "tokenizer_files", path).get<std::map<std::string, std::string>>();
      h.has_manifest = true;
    } else if (j.contains("identity")) {
      h.identity = j.at("identity").get<std::string>();
      const std::string content = dataset_identity(j);
      if (content != h.identity)
        throw Error(path + ": records identity " + h.identity + " but its content is " + content +
                    ": header.json was edited after preparation; " + kRerun);
      const auto& manifest = need(j, "manifest", path);
      for (const auto& [name, entry] : need(manifest, "files", path).items())
        h.file_hashes[name] = need(entry, "fnv1a64", path).get<std::string>();
      h.tokenizer_files = need(manifest, "tokenizer_files", path).get<std::map<std::string, std::string>>();
      h.has_manifest = true;
    } else {
      h.identity = "unrecorded-" + fs::to_hex(fs::fnv1a64(fs::read_file(path)));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": unexpected content (" + e.what() + "); " + kRerun);
  }
  return h;
}

std::string dataset_identity(const nlohmann::json& header_json) {
  nlohmann::json content = header_json;
  content.erase("identity");
  if (content.contains("created") && content["created"].is_object())
    for (const char* volatile_key : {"by", "version", "time"}) content["created"].erase(volatile_key);
  return "dataset-" + fs::to_hex(fs::fnv1a64(content.dump()));  // dump() sorts keys: one text per content
}

std::map<std::string, std::string> tokenizer_file_hashes(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const char* name : kTokenizerFileNames) {
    const std::string path = dir + "/" + name;
    if (fs::exists(path)) out[name] = fs::file_hash_hex(path);
  }
  return out;
}

PretrainDataset::PretrainDataset(const std::string& dir) : dir_(dir), header_(read_pretrain_header(dir)) {
  if (!header_.has_manifest)
    spdlog::warn("[data] {} was prepared before datasets carried a manifest: its files cannot be verified and its "
                 "identity is {}; re-run `tisa-train prepare pretrain` to give it one",
                 dir, header_.identity);
  for (const auto& [name, hash] : header_.tokenizer_files) {
    const std::string path = dir + "/" + name;
    if (!fs::exists(path))
      throw Error("pretraining dataset " + dir + ": its tokenizer file " + name + " is missing; " + kRerun);
    const std::string got = fs::file_hash_hex(path);
    if (got != hash)
      throw Error(path + " is not the tokenizer this dataset was prepared with (" + header_.tokenizer.identity +
                  "): its content hashes to " + got + ", the manifest records " + hash + "; " + kRerun);
  }
  train_.name_ = "train";
  valid_.name_ = "valid";
  if (header_.shards.empty()) {
    open_shard_split(train_, dir, header_, "train");
    open_shard_split(valid_, dir, header_, "valid");
  } else {
    for (const ShardRecord& r : header_.shards) {
      const std::string shard_dir = dir + "/" + r.path;
      const PretrainHeader sh = read_pretrain_header(shard_dir);
      const std::string where = "pretraining dataset " + dir + ": shard " + r.path;
      if (sh.format_version != kPretrainFormatVersion)
        throw Error(where + " is itself a sharded dataset (format_version 2); " + kRerun);
      if (sh.identity != r.identity)
        throw Error(where + " is " + sh.identity + " but header.json lists " + r.identity +
                    " (the shard was replaced after preparation); " + kRerun);
      if (sh.tokenizer.identity != header_.tokenizer.identity || sh.token_dtype != header_.token_dtype)
        throw Error(where + " was prepared with tokenizer " + sh.tokenizer.identity + ", the dataset with " +
                    header_.tokenizer.identity + "; " + kRerun);
      open_shard_split(train_, shard_dir, sh, "train");
      open_shard_split(valid_, shard_dir, sh, "valid");
    }
    for (const PretrainSplit* s : {&train_, &valid_}) {
      const SplitCounts& want = header_.counts(s->name_);
      if (s->counts_.tokens != want.tokens || s->counts_.sentences != want.sentences ||
          s->counts_.documents != want.documents)
        throw Error("pretraining dataset " + dir + ": its shards' " + s->name_ + " counts do not add up to header.json's; " +
                    kRerun);
    }
  }
}

void PretrainDataset::open_shard_split(PretrainSplit& s, const std::string& dir, const PretrainHeader& h,
                                       const std::string& name) {
  const SplitCounts c = h.counts(name);
  const bool u16 = h.token_dtype == "uint16";
  const uint64_t ntok = static_cast<uint64_t>(c.tokens);
  auto recorded_hash = [&](const std::string& path) {  // "" when the manifest has none (old dataset)
    const auto it = h.file_hashes.find(path.substr(path.find_last_of('/') + 1));
    if (h.has_manifest && it == h.file_hashes.end()) corrupt(path, "header.json's manifest does not list this file");
    return it == h.file_hashes.end() ? std::string() : it->second;
  };
  PretrainSplit::Shard shard;
  shard.token_base = s.counts_.tokens;
  const std::string tpath = bin_path(dir, name, "tokens"), wpath = bin_path(dir, name, "wordstart");
  const uint8_t* tokens = map_bin(s.files_, tpath, u16 ? 2 : 4, ntok, false, recorded_hash(tpath));
  if (u16) shard.u16 = Span<uint16_t>(reinterpret_cast<const uint16_t*>(tokens), ntok);
  else shard.i32 = Span<int32_t>(reinterpret_cast<const int32_t*>(tokens), ntok);
  shard.word_bits = map_bin(s.files_, wpath, 1, ntok, true, recorded_hash(wpath));
  const std::string spath = bin_path(dir, name, "sentences");
  const std::string dpath = bin_path(dir, name, "documents");
  const auto* so = reinterpret_cast<const int64_t*>(
      map_bin(s.files_, spath, 8, static_cast<uint64_t>(c.sentences + 1), false, recorded_hash(spath)));
  const auto* dof = reinterpret_cast<const int64_t*>(
      map_bin(s.files_, dpath, 8, static_cast<uint64_t>(c.documents + 1), false, recorded_hash(dpath)));
  if (so[0] != 0 || so[c.sentences] != c.tokens) corrupt(spath, "sentence offsets do not span [0, tokens]");
  if (dof[0] != 0 || dof[c.documents] != c.sentences) corrupt(dpath, "document offsets do not span [0, sentences]");
  // A full monotonicity scan is O(sentences) and cheap next to training; it catches bit rot.
  for (int64_t i = 0; i < c.sentences; ++i)
    if (so[i + 1] <= so[i]) corrupt(spath, "sentence " + std::to_string(i) + " is empty or offsets decrease");
  for (int64_t i = 0; i < c.documents; ++i)
    if (dof[i + 1] <= dof[i]) corrupt(dpath, "document " + std::to_string(i) + " is empty or offsets decrease");
  // Every id inside the recorded vocabulary (the trainer checks that the model's is at least as
  // large): an id past it would index outside the embedding table in the middle of training.
  const int64_t vocab = h.tokenizer.vocab_size;
  for (uint64_t i = 0; i < ntok; ++i) {
    const int64_t id = u16 ? shard.u16[i] : shard.i32[i];
    if (id < 0 || id >= vocab)
      corrupt(tpath, "token " + std::to_string(i) + " is id " + std::to_string(id) + ", outside the vocabulary [0, " +
                         std::to_string(vocab) + ") recorded in header.json");
  }
  if (c.documents == 0) return;  // an empty split of a shard adds nothing to index
  s.shards_.push_back(shard);
  s.sentence_parts_.push_back({s.counts_.sentences, s.counts_.tokens, Span<int64_t>(so, c.sentences + 1)});
  s.document_parts_.push_back({s.counts_.documents, s.counts_.sentences, Span<int64_t>(dof, c.documents + 1)});
  s.counts_.tokens += c.tokens;
  s.counts_.sentences += c.sentences;
  s.counts_.documents += c.documents;
}

namespace {

// The last element of `v` (non-empty, sorted by first(e)) whose first index is <= i; an index on
// a boundary reads the same value in both neighbours.
template <class T, class First> const T& last_starting_at_or_before(const std::vector<T>& v, int64_t i, First first) {
  size_t lo = 0, hi = v.size();
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    (first(v[mid]) <= i ? lo : hi) = mid;
  }
  return v[lo];
}

}  // namespace

const OffsetView::Part& OffsetView::part(int64_t i) const {
  return last_starting_at_or_before(*parts_, i, [](const Part& p) { return p.first; });
}

const PretrainSplit::Shard& PretrainSplit::shard_of_token(int64_t i) const {
  return last_starting_at_or_before(shards_, i, [](const Shard& s) { return s.token_base; });
}

const PretrainSplit& PretrainDataset::split(const std::string& name) const {
  return split_index(name) == 0 ? train_ : valid_;
}

void PretrainSplit::append_tokens(int64_t begin, int64_t end, std::vector<int32_t>& ids,
                                  std::vector<uint8_t>* starts) const {
  ids.reserve(ids.size() + static_cast<size_t>(end - begin));
  while (begin < end) {  // one shard at a time (a document never spans two)
    const Shard& s = shard_of_token(begin);
    const int64_t shard_end = s.token_base + static_cast<int64_t>(s.u16.data() ? s.u16.size() : s.i32.size());
    const int64_t stop = std::min(end, shard_end);
    const size_t a = static_cast<size_t>(begin - s.token_base), b = static_cast<size_t>(stop - s.token_base);
    if (s.u16.data()) ids.insert(ids.end(), s.u16.begin() + a, s.u16.begin() + b);
    else ids.insert(ids.end(), s.i32.begin() + a, s.i32.begin() + b);
    if (starts)
      for (size_t k = a; k < b; ++k) starts->push_back((s.word_bits[k >> 3] >> (k & 7)) & 1);
    begin = stop;
  }
}

// ------------------------------------------------------------------------------------ combine
namespace {

// Hard-links src to dst, or copies it when linking is not possible (another file system).
void link_or_copy(const std::string& src, const std::string& dst) {
  std::error_code ec;
  std::filesystem::create_hard_link(src, dst, ec);
  if (ec) std::filesystem::copy_file(src, dst, std::filesystem::copy_options::overwrite_existing);
}

}  // namespace

PretrainHeader combine_datasets(const std::vector<std::string>& inputs, const std::string& output) {
  namespace stdfs = std::filesystem;
  if (inputs.empty()) throw Error("prepare combine: no --input datasets");
  std::vector<PretrainHeader> headers;
  for (const auto& in : inputs) {
    PretrainDataset check(in);  // validates every file and hash before anything is linked
    headers.push_back(check.header());
    const auto& first = headers.front();
    if (check.header().tokenizer.identity != first.tokenizer.identity ||
        check.header().tokenizer_files != first.tokenizer_files)
      throw Error("prepare combine: " + in + " was prepared with tokenizer " + check.header().tokenizer.identity +
                  ", " + inputs.front() + " with " + first.tokenizer.identity +
                  ": datasets of different tokenizers cannot train one model");
  }
  fs::create_directories(output);
  std::remove((output + "/" + kPretrainHeaderName).c_str());
  std::vector<ShardRecord> shards;
  nlohmann::json sources = nlohmann::json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PretrainHeader& h = headers[i];
    std::vector<std::pair<std::string, ShardRecord>> from;  // (source folder, record)
    if (h.shards.empty()) from.push_back({inputs[i], {"", h.identity, h.train, h.valid}});
    else
      for (const ShardRecord& r : h.shards) from.push_back({inputs[i] + "/" + r.path, r});
    for (auto& [src, r] : from) {
      r.path = shard_name(shards.size());
      const std::string dst = output + "/" + r.path;
      fs::create_directories(dst);
      for (const auto& entry : stdfs::directory_iterator(src)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && (name == kPretrainHeaderName || (name.size() > 4 && name.substr(name.size() - 4) == ".bin")))
          link_or_copy(entry.path().string(), dst + "/" + name);
      }
      shards.push_back(r);
    }
    sources.push_back({{"identity", h.identity}, {"shards", h.shards.empty() ? 1 : h.shards.size()}});
  }
  for (const auto& [name, hash] : headers.front().tokenizer_files)
    link_or_copy(inputs.front() + "/" + name, output + "/" + name);
  const nlohmann::json created = {{"by", "tisa-train prepare combine"}, {"combined", sources}};
  return write_sharded_header(output, headers.front().tokenizer, shards, created);
}

}  // namespace tisa::data
