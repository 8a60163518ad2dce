// Helpers for the pretraining-data tests: small datasets written through PretrainDatasetWriter,
// and a word-level stand-in tokenizer over real text from shared/data/corpus (links tisa_core
// only, so no SentencePiece here).
#pragma once
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/fs.h"
#include "data/pretrain_dataset.h"

namespace tisa::test {

// Specials of the stand-in vocabulary (ALBERT's ids): pad 0, unk 1, [CLS] 2, [SEP] 3, [MASK] 4.
inline data::DatasetTokenizerInfo toy_tokenizer_info(int64_t vocab_size = 30000) {
  data::DatasetTokenizerInfo t;
  t.identity = "toy:words-in-4-char-pieces";
  t.type = "toy";
  t.vocab_size = vocab_size;
  t.special_ids = {0, 1, 2, 3, 4};
  return t;
}

// A sentence of `words` words, each of `pieces` pieces with ids from `next_id` upwards.
inline data::SentenceTokens toy_sentence(int words, int pieces, int32_t& next_id, int32_t vocab = 30000) {
  data::SentenceTokens s;
  for (int w = 0; w < words; ++w)
    for (int p = 0; p < pieces; ++p) {
      s.ids.push_back(next_id);
      s.word_start.push_back(p == 0);
      next_id = next_id + 1 < vocab ? next_id + 1 : 5;
    }
  return s;
}

// Splits real text into pieces: words by whitespace, each word into pieces of up to 4 bytes
// (first piece = word start), ids = 5 + FNV(piece) mod (vocab − 5). Sentences end after a word
// ending in . ! or ?.
inline data::DocumentTokens toy_tokenize_paragraphs(const std::vector<std::string>& paragraphs,
                                                    int64_t vocab = 30000) {
  data::DocumentTokens doc;
  for (const auto& para : paragraphs) {
    std::istringstream in(para);
    std::string word;
    data::SentenceTokens s;
    while (in >> word) {
      for (size_t i = 0; i < word.size(); i += 4) {
        const std::string piece = word.substr(i, 4);
        s.ids.push_back(static_cast<int32_t>(5 + fs::fnv1a64(piece) % static_cast<uint64_t>(vocab - 5)));
        s.word_start.push_back(i == 0);
      }
      const char last = word.back();
      if (last == '.' || last == '!' || last == '?') {
        doc.push_back(std::move(s));
        s = {};
      }
    }
    if (!s.ids.empty()) doc.push_back(std::move(s));
  }
  return doc;
}

// Documents of a WikiText file: articles start at " = Title = " lines; other non-empty lines
// that are not headings are paragraphs.
inline std::vector<data::DocumentTokens> toy_wikitext_documents(const std::string& path) {
  std::istringstream in(fs::read_file(path));
  std::string line;
  std::vector<std::vector<std::string>> articles;
  while (std::getline(in, line)) {
    if (line.size() > 3 && line.rfind(" = ", 0) == 0 && line.rfind(" = = ", 0) != 0) {
      articles.emplace_back();
      continue;
    }
    if (line.rfind(" = = ", 0) == 0 || line.find_first_not_of(' ') == std::string::npos) continue;
    if (articles.empty()) articles.emplace_back();
    articles.back().push_back(line);
  }
  std::vector<data::DocumentTokens> docs;
  for (const auto& a : articles) docs.push_back(toy_tokenize_paragraphs(a));
  return docs;
}

// Writes documents to a fresh dataset folder (every `valid_every`-th document to valid when > 0).
inline std::shared_ptr<const data::PretrainDataset> write_toy_dataset(
    const std::string& dir, const std::vector<data::DocumentTokens>& docs, int valid_every = 0,
    int64_t vocab = 30000) {
  data::PretrainDatasetWriter w(dir, toy_tokenizer_info(vocab), {{"by", "test"}});
  for (size_t i = 0; i < docs.size(); ++i)
    w.add_document(valid_every > 0 && static_cast<int>(i % valid_every) == valid_every - 1 ? "valid" : "train", docs[i]);
  w.finish();
  return std::make_shared<const data::PretrainDataset>(dir);
}

}  // namespace tisa::test
