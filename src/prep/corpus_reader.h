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
//   gutenberg  wrapped prose (Project Gutenberg books and the like): the text between the line
//              starting "*** START OF" and the line starting "*** END OF" is kept (the whole
//              text when the markers are absent); lines are joined into paragraphs at blank
//              lines; a paragraph that is a chapter heading (CHAPTER/BOOK/PART/STAVE/VOLUME +
//              one short word, any case, < 60 bytes) starts a new document and is dropped;
//              paragraphs are split into sentences. A book without chapters is one document.
//   lines      every non-empty line is one document (a paragraph or article per line), split
//              into sentences.
//   auto       decided from the first 64 KiB (see detect_corpus_format).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tisa::prep {

enum class CorpusFormat { kAuto, kAlbert, kWikiText, kGutenberg, kLines };

// "auto", "albert", "wikitext", "gutenberg", "lines"; throws tisa::Error listing them otherwise.
CorpusFormat parse_corpus_format(const std::string& name);
const char* corpus_format_name(CorpusFormat format);

using TextDocument = std::vector<std::string>;  // sentences

// Drops a leading UTF-8 BOM and converts CRLF and lone CR to LF.
std::string normalize_text(std::string_view text);

// Content-based detection (on normalised text, first 64 KiB), in this order:
//   1. a line starting "*** START OF" or "***START OF"            → gutenberg
//   2. a WikiText title line (` = X = `) and ≥ 90% of the non-empty lines begin with a space
//                                                                 → wikitext
//   3. mean non-empty line length ≥ 250 bytes                      → lines
//   4. blank lines present and ≥ 60% of non-empty lines end a sentence (. ! ? or a closing
//      quote/bracket after one)                                    → albert
//   5. otherwise (wrapped prose)                                   → gutenberg
CorpusFormat detect_corpus_format(std::string_view normalized_text);

// Documents of `text` (raw file content; normalised here). `format` kAuto detects; the format
// used is stored in *used when non-null. Empty documents are dropped.
std::vector<TextDocument> read_corpus_text(std::string_view text, CorpusFormat format,
                                           CorpusFormat* used = nullptr);

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
