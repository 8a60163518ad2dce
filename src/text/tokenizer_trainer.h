// Training new tokenizers from text files (SPEC §6): a SentencePiece unigram model with ALBERT's
// flags, or a WordPiece vocabulary. The output directory holds the model (spiece.model) or the
// vocabulary (vocab.txt) plus tisa_tokenizer.json, and loads with load_tokenizer(dir).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tisa::text {

struct TokenizerTrainOptions {
  std::string type = "sentencepiece";  // or "wordpiece"
  std::vector<std::string> inputs;     // UTF-8 text files, one sentence/paragraph per line
  int64_t vocab_size = 30000;
  std::string output_dir;
  bool lowercase = true;
  bool keep_accents = false;
  int threads = 0;  // <= 0: all hardware threads
  // SentencePiece: at most this many sentences (sampled with shuffling) feed the trainer.
  int64_t max_sentences = 1000000;
  // WordPiece: pairs seen fewer times than this are never merged; at most this many distinct
  // characters form the alphabet (the most frequent ones).
  int64_t min_frequency = 2;
  int64_t limit_alphabet = 1000;
};

// Lines of the files: a UTF-8 BOM at the start of a file is dropped, lines split on "\n", a
// trailing "\r" removed; empty lines are kept (callers skip them). Throws tisa::Error naming a
// missing file.
std::vector<std::string> read_text_lines(const std::vector<std::string>& files);

// Trains and writes the tokenizer; returns the path of the output directory's JSON file.
std::string train_tokenizer(const TokenizerTrainOptions& options);

// WordPiece vocabulary learning on in-memory lines (what train_tokenizer uses): BasicTokenizer
// words (with the options' lowercasing/accent stripping) are counted; the alphabet is the
// `limit_alphabet` most frequent characters (others are left out of words, as in HF tokenizers'
// trainer); every word starts as its characters, non-initial ones written "##c"; then, as in HF
// tokenizers' WordPiece trainer (BPE with a "##" continuation prefix), the most frequent adjacent
// pair (ties: the pair of smaller ids) is merged into a + b-without-"##" until the vocabulary has
// `vocab_size` tokens or no pair is seen min_frequency times. Vocabulary order: [PAD] [UNK] [CLS]
// [SEP] [MASK], the alphabet (by code point), the "##" forms in order of appearance, then merges.
std::vector<std::string> learn_wordpiece_vocab(const std::vector<std::string>& lines,
                                               const TokenizerTrainOptions& options);

}  // namespace tisa::text
