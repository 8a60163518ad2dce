// Readers of raw pretraining corpora: text → documents of sentences (SPEC §5 input), for
// `tisa-train prepare pretrain`. Torch-free, tokenizer-free.
//
// Every reader first drops a UTF-8 BOM and turns CRLF / CR line ends into LF. Formats:
//   albert     ALBERT/BERT pretraining input: one sentence per line, blank line between
//              documents. Lines are used as they are (trimmed), not re-split.
//   wikitext   WikiText-2/103 (raw or tokenized): a line ` = Title = ` (one '=' each side)
//              starts an article (= a document; the title itself is dropped); section headings
//              ` = = ... = = ` are dropped (they neither become sentences nor split documents);
//              every other non-empty line is a paragraph. WikiText's tokenisation is partly
//              undone (" @-@ " → "-", " @,@ " → ",", " @.@ " → ".", no space before , . ; : ! ? ) ]
//              or 's / n't, none after ( [), then paragraphs are split into sentences.
//   gutenberg  wrapped prose (Project Gutenberg books and the like). Every book's body, between
//              a line starting "*** START OF" and the next starting "*** END OF", is kept; the
//              header before START and the licence after END (up to its last paragraph, "...
//              hear about new eBooks.", or the next START) are dropped and reported, so a file
//              of several concatenated books keeps every body, each book its own document(s).
//              Text outside the markers that is no header or licence (more than
//              kMaxBoilerplateBytes without a START or a licence end) is kept; without markers
//              the whole text is kept. Lines are joined into paragraphs at blank lines; a
//              paragraph that is a chapter heading (CHAPTER/BOOK/PART/STAVE/VOLUME + one short
//              word, any case, < 60 bytes) starts a new document and is dropped (reported);
//              paragraphs are split into sentences. A book without chapters is one document.
//   lines      every non-empty line is one document (a paragraph or article per line), split
//              into sentences.
//   jsonl      JSON Lines: every non-blank line is a JSON object, one document, whose text field
//              (ReaderOptions::text_field, default "text") holds the text; its non-empty lines
//              are paragraphs, split into sentences. A line that is not an object, lacks the
//              field or holds a non-string there is an error naming file and line.
//   auto       decided from the first 64 KiB (see detect_corpus_format).
// Readers stream: memory is bounded by the longest paragraph and document (a document longer
// than kMaxDocumentBytes is cut into parts at sentence ends, and the report counts the cuts).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "prep/corpus_source.h"

namespace tisa::prep {

enum class CorpusFormat { kAuto, kAlbert, kWikiText, kGutenberg, kLines, kJsonl };

// "auto", "albert", "wikitext", "gutenberg", "lines", "jsonl"; throws tisa::Error listing them otherwise.
CorpusFormat parse_corpus_format(const std::string& name);
const char* corpus_format_name(CorpusFormat format);

using TextDocument = std::vector<std::string>;  // sentences

// Drops a leading UTF-8 BOM and converts CRLF and lone CR to LF.
std::string normalize_text(std::string_view text);

// Content-based detection (on normalised text, first 64 KiB), in this order:
//   0. the first non-blank line is a JSON object                  → jsonl
//   1. a line starting "*** START OF" or "***START OF"            → gutenberg
//   2. a WikiText title line (` = X = `) and ≥ 90% of the non-empty lines begin with a space
//                                                                 → wikitext
//   3. mean non-empty line length ≥ 250 bytes                      → lines
//   4. blank lines present and ≥ 60% of non-empty lines end a sentence (. ! ? or a closing
//      quote/bracket after one)                                    → albert
//   5. otherwise (wrapped prose)                                   → gutenberg
CorpusFormat detect_corpus_format(std::string_view normalized_text);

inline constexpr int64_t kMaxBoilerplateBytes = 64 * 1024;
inline constexpr const char* kBoilerplateReason = "Project Gutenberg headers and licences";
inline constexpr int64_t kMaxDocumentBytes = 64LL << 20;

struct ReaderOptions {
  std::string text_field = "text";  // jsonl
  // Called now and then (every 4,096 lines) with the bytes of the file consumed so far.
  std::function<void(int64_t file_bytes)> progress;
};

// What one file gave and what it lost. "Text" is every line's bytes without its surrounding
// whitespace (for jsonl: the text field's lines), so blank lines and indentation are neither kept
// nor dropped. dropped[reason] is text the format's rules discard: Project Gutenberg headers and
// licences (recognised by their markers), headings, titles. What is dropped beyond those
// headers and licences is the share that prepare refuses above --max-drop-share: a file whose
// "headings" are a large part of it is not the format it was read as.
struct ReadReport {
  std::string path;
  CorpusFormat format = CorpusFormat::kAuto;  // the format used
  Compression compression = Compression::kNone;
  int64_t bytes = 0;       // bytes read (decompressed)
  int64_t text_bytes = 0;  // non-blank text seen
  int64_t kept_bytes = 0;  // of it, what became sentences
  std::map<std::string, int64_t> dropped;
  int64_t documents = 0, sentences = 0;
  int64_t documents_cut = 0;  // documents cut at kMaxDocumentBytes
  int64_t dropped_beyond_boilerplate() const;
  double dropped_share() const {  // of the text, dropped beyond headers and licences
    return text_bytes > 0 ? static_cast<double>(dropped_beyond_boilerplate()) / static_cast<double>(text_bytes) : 0.0;
  }
};

using DocumentSink = std::function<void(TextDocument&&)>;

// Streams one file's documents into `sink`, in file order (format kAuto: detected from the first
// 64 KiB). Empty documents are not emitted. Throws tisa::Error naming file:line on bad input.
ReadReport read_corpus_file(const std::string& path, CorpusFormat format, const ReaderOptions& options,
                            const DocumentSink& sink);

// The same on text in memory (raw content; normalised here): its documents, the format used in
// *used and the report in *report when non-null.
std::vector<TextDocument> read_corpus_text(std::string_view text, CorpusFormat format, CorpusFormat* used = nullptr,
                                           ReadReport* report = nullptr, const ReaderOptions& options = {});

// Sentence splitter for one paragraph (whitespace collapsed first). A sentence ends after '.',
// '!' or '?' (runs like "?!" or "..." included), optionally followed by closing quotes or
// brackets (" ' ” ’ ) ]), when whitespace follows and the next text starts with an uppercase
// ASCII letter, a digit or an opening quote/bracket (" ' “ ‘ ( [). A '.' does not end a sentence
// after a known abbreviation (Mr Mrs Ms Dr St Jr Sr Prof Rev Gen Col Capt Lt Sgt Hon Gov Mt Ft
// vs etc No Vol Fig Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Inc Ltd Co Corp, case-
// sensitive as written, and "e.g"/"i.e") or after a single letter (initials: "J. R. R.").
std::vector<std::string> split_sentences(std::string_view paragraph);

// Undoes WikiText tokenisation as described above (one line).
std::string wikitext_detokenize(std::string_view line);

}  // namespace tisa::prep
