// Corpus readers of `prepare pretrain` (ALBERT, WikiText, Gutenberg with BOM + CRLF, lines,
// auto-detection) and the sentence splitter, on small hand-written strings.
#include <gtest/gtest.h>

#include "common/error.h"
#include "prep/corpus_reader.h"
#include "support/expect_error.h"

using namespace tisa::prep;
using Docs = std::vector<TextDocument>;

TEST(SentenceSplitterTest, SplitsAtSentenceEnds) {
  EXPECT_EQ(split_sentences("It rained. We stayed in!  Did you?   Yes."),
            (std::vector<std::string>{"It rained.", "We stayed in!", "Did you?", "Yes."}));
}

TEST(SentenceSplitterTest, ClosingQuotesStayWithTheSentence) {
  EXPECT_EQ(split_sentences("\"Go home.\" She left. (It was late.) Then \xE2\x80\x9CWhy?\xE2\x80\x9D he asked."),
            (std::vector<std::string>{"\"Go home.\"", "She left.", "(It was late.)",
                                      "Then \xE2\x80\x9CWhy?\xE2\x80\x9D he asked."}));
  EXPECT_EQ(split_sentences("He said \xE2\x80\x9CNo.\xE2\x80\x9D \xE2\x80\x9CWhy not?\xE2\x80\x9D"),
            (std::vector<std::string>{"He said \xE2\x80\x9CNo.\xE2\x80\x9D", "\xE2\x80\x9CWhy not?\xE2\x80\x9D"}));
}

TEST(SentenceSplitterTest, AbbreviationsInitialsAndLowercaseDoNotSplit) {
  EXPECT_EQ(split_sentences("Mr. Darcy met Dr. Jones at St. Paul's. They spoke."),
            (std::vector<std::string>{"Mr. Darcy met Dr. Jones at St. Paul's.", "They spoke."}));
  EXPECT_EQ(split_sentences("J. R. R. Tolkien wrote it. Fine."),
            (std::vector<std::string>{"J. R. R. Tolkien wrote it.", "Fine."}));
  EXPECT_EQ(split_sentences("It costs 3.5 dollars, i.e. cheap. etc. and so on."),
            (std::vector<std::string>{"It costs 3.5 dollars, i.e. cheap. etc. and so on."}));
  EXPECT_EQ(split_sentences("Wait... What?! No."), (std::vector<std::string>{"Wait...", "What?!", "No."}));
  EXPECT_EQ(split_sentences("In 1812. 1813 was worse."), (std::vector<std::string>{"In 1812.", "1813 was worse."}));
  EXPECT_EQ(split_sentences("  no end here  "), (std::vector<std::string>{"no end here"}));
  EXPECT_TRUE(split_sentences("   ").empty());
}

TEST(CorpusReaderTest, AlbertFormatOneSentencePerLine) {
  const std::string text = "First sentence here.\nSecond  one.\n\n\nOther doc.\n  \nThird doc line\n";
  CorpusFormat used;
  const Docs docs = read_corpus_text(text, CorpusFormat::kAlbert, &used);
  EXPECT_EQ(used, CorpusFormat::kAlbert);
  EXPECT_EQ(docs, (Docs{{"First sentence here.", "Second one."}, {"Other doc."}, {"Third doc line"}}));
  EXPECT_EQ(read_corpus_text(text, CorpusFormat::kAuto, &used), docs);
  EXPECT_EQ(used, CorpusFormat::kAlbert);
}

TEST(CorpusReaderTest, WikiTextArticlesHeadingsAndDetokenisation) {
  const std::string text =
      " \n = Valkyria Chronicles = \n \n Senjō no Valkyria 3 is a tactical role @-@ playing game . It was "
      "released in 2011 , in Japan .\n \n = = Gameplay = = \n \n The game 's 1 @,@ 000 units ( mostly ) move .\n"
      " = Second Article = \n Only one paragraph here : 3 @.@ 5 percent do n't .\n";
  CorpusFormat used;
  const Docs docs = read_corpus_text(text, CorpusFormat::kAuto, &used);
  EXPECT_EQ(used, CorpusFormat::kWikiText);
  EXPECT_EQ(docs, (Docs{{"Senjō no Valkyria 3 is a tactical role-playing game.", "It was released in 2011, in Japan.",
                         "The game's 1,000 units (mostly) move."},
                        {"Only one paragraph here: 3.5 percent don't."}}));
}

TEST(CorpusReaderTest, GutenbergWithBomCrlfMarkersAndChapters) {
  const std::string text =
      "\xEF\xBB\xBFThe Project Gutenberg EBook of Test, by Nobody\r\n\r\nLicence text. Do not use.\r\n"
      "*** START OF THIS PROJECT GUTENBERG EBOOK TEST ***\r\n\r\nCHAPTER I.\r\n\r\n"
      "It was a dark and stormy night. The rain fell in\r\ntorrents, except at occasional\r\n"
      "intervals. Mr. Smith\r\nslept.\r\n\r\n\"Who is there?\" asked he.\r\n\r\n"
      "Chapter 2\r\n\r\nMorning came.\r\n\r\n"
      "*** END OF THIS PROJECT GUTENBERG EBOOK TEST ***\r\n\r\nMore licence. Text.\r\n";
  CorpusFormat used;
  const Docs docs = read_corpus_text(text, CorpusFormat::kAuto, &used);
  EXPECT_EQ(used, CorpusFormat::kGutenberg);
  EXPECT_EQ(docs, (Docs{{"It was a dark and stormy night.", "The rain fell in torrents, except at occasional intervals.",
                         "Mr. Smith slept.", "\"Who is there?\" asked he."},
                        {"Morning came."}}));
}

TEST(CorpusReaderTest, ProseWithoutMarkersAndLinesFormat) {
  const std::string prose = "First Citizen:\nBefore we proceed any further, hear me\nspeak.\n\nAll:\nSpeak, speak.\n";
  CorpusFormat used;
  EXPECT_EQ(read_corpus_text(prose, CorpusFormat::kAuto, &used),
            (Docs{{"First Citizen: Before we proceed any further, hear me speak.", "All: Speak, speak."}}));
  EXPECT_EQ(used, CorpusFormat::kGutenberg);
  std::string long_line(600, 'x');  // mean line length ≥ 250 → lines
  const std::string lines = "A first doc. Then " + long_line + "\nSecond doc. Two.\r\n";
  EXPECT_EQ(read_corpus_text(lines, CorpusFormat::kAuto, &used),
            (Docs{{"A first doc.", "Then " + long_line}, {"Second doc.", "Two."}}));
  EXPECT_EQ(used, CorpusFormat::kLines);
}

TEST(CorpusReaderTest, NormalisationAndFormatNames) {
  EXPECT_EQ(normalize_text("\xEF\xBB\xBF" "a\r\nb\rc\n"), "a\nb\nc\n");
  EXPECT_EQ(parse_corpus_format("wikitext"), CorpusFormat::kWikiText);
  try {
    parse_corpus_format("xml");
    FAIL();
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("gutenberg"), std::string::npos);
  }
  EXPECT_TRUE(read_corpus_text("", CorpusFormat::kAuto).empty());
}

namespace {

std::string book(const std::string& title, const std::string& body) {
  return "The Project Gutenberg eBook of " + title + "\n\nTitle: " + title + "\n\n*** START OF THE PROJECT GUTENBERG EBOOK " +
         title + " ***\n\n" + body + "\n\n*** END OF THE PROJECT GUTENBERG EBOOK " + title +
         " ***\n\nSection 1. General Terms of Use and Redistributing Project Gutenberg works.\n\n"
         "This website includes information about Project Gutenberg, including how to\nsubscribe to our email "
         "newsletter to hear about new eBooks.\n\n";
}

}  // namespace

// `cat *.txt > corpus.txt` of Gutenberg books: every book keeps its body (issue 33 measured 95 %
// of such a file dropped after the first book's end marker), each book its own document, and the
// headers and licences between them are reported as dropped for that reason.
TEST(CorpusReaderTest, ConcatenatedGutenbergBooksKeepEveryBody) {
  const std::string text = book("One", "CHAPTER I\n\nFirst book text. It is short.") +
                           book("Two", "Second book, first paragraph.\n\nSecond paragraph.") +
                           book("Three", "Third book.");
  CorpusFormat used;
  ReadReport r;
  const Docs docs = read_corpus_text(text, CorpusFormat::kAuto, &used, &r);
  EXPECT_EQ(used, CorpusFormat::kGutenberg);
  EXPECT_EQ(docs, (Docs{{"First book text.", "It is short."},
                        {"Second book, first paragraph.", "Second paragraph."},
                        {"Third book."}}));
  EXPECT_EQ(r.documents, 3);
  EXPECT_EQ(r.dropped_beyond_boilerplate(), 9);
  EXPECT_GT(r.dropped.at("Project Gutenberg headers and licences"), 0);
  EXPECT_EQ(r.dropped.at("chapter headings"), 9);  // "CHAPTER I"
  int64_t dropped = 0;
  for (const auto& [reason, bytes] : r.dropped) dropped += bytes;
  EXPECT_EQ(r.kept_bytes + dropped, r.text_bytes);  // every byte of text is kept or dropped for a reason
}

// Text after a book's end marker that is no licence (more than a licence's size without the
// licence's last paragraph or a START marker) is kept, not dropped: a book followed by other text.
TEST(CorpusReaderTest, TextAfterABookThatIsNoLicenceIsKept) {
  std::string notes = "\n*** END OF THE BOOK ***\nAn afterword.\n\n";
  for (int i = 0; i < 2000; ++i) notes += "My own notes, line " + std::to_string(i) + ", to be trained on.\n";
  ReadReport r;
  const Docs docs =
      read_corpus_text("*** START OF THE BOOK ***\nThe body.\n" + notes, CorpusFormat::kGutenberg, nullptr, &r);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0], (TextDocument{"The body."}));
  EXPECT_EQ(docs[1].front(), "An afterword.");
  EXPECT_EQ(docs[1].back(), "My own notes, line 1999, to be trained on.");
  EXPECT_EQ(r.dropped_beyond_boilerplate(), 0);
  int64_t dropped = 0;
  for (const auto& [reason, bytes] : r.dropped) dropped += bytes;
  EXPECT_EQ(dropped, static_cast<int64_t>(std::string("*** START OF THE BOOK ****** END OF THE BOOK ***").size()));
  EXPECT_EQ(r.kept_bytes + dropped, r.text_bytes);
}

TEST(CorpusReaderTest, WikiTextReportsTitlesAndHeadings) {
  ReadReport r;
  read_corpus_text(" = Title = \n = = Section = = \n Text here .\n", CorpusFormat::kWikiText, nullptr, &r);
  EXPECT_EQ(r.dropped.at("wikitext article titles"), 9);
  EXPECT_EQ(r.dropped.at("wikitext section headings"), 15);
  EXPECT_EQ(r.kept_bytes, 11);
  EXPECT_EQ(r.text_bytes, 35);
}

TEST(CorpusReaderTest, JsonLinesDocumentsFieldsAndErrors) {
  CorpusFormat used;
  EXPECT_EQ(read_corpus_text("{\"text\": \"One. Two.\"}\n{\"text\": \"Three.\\n\\nFour.\"}\n", CorpusFormat::kAuto, &used),
            (Docs{{"One.", "Two."}, {"Three.", "Four."}}));
  EXPECT_EQ(used, CorpusFormat::kJsonl);
  ReaderOptions body;
  body.text_field = "body";
  EXPECT_EQ(read_corpus_text("{\"body\": \"A b.\", \"text\": 3}\n", CorpusFormat::kJsonl, nullptr, nullptr, body),
            (Docs{{"A b."}}));
  auto error = [](const std::string& text) {
    return tisa::test::error_of([&] { read_corpus_text(text, CorpusFormat::kJsonl); });
  };
  EXPECT_HAS(error("{\"text\": \"ok\"}\n{\"text\": \"broken}\n"), ":2: not a JSON object");
  EXPECT_HAS(error("{\"title\": \"x\", \"body\": \"y\"}\n"), "no \"text\" field (it has: body, title)");
  EXPECT_HAS(error("{\"text\": [1, 2]}\n"), "\"text\" is array, expected a string");
}

TEST(CorpusReaderTest, OverlongDocumentsAreCutAndCounted) {
  std::string text;
  const std::string sentence(1000, 'a');
  for (int i = 0; i < 70 * 1024; ++i) text += sentence + "\n";  // 70 MiB in one albert document
  ReadReport r;
  const Docs docs = read_corpus_text(text, CorpusFormat::kAlbert, nullptr, &r);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(r.documents_cut, 1);
  EXPECT_EQ(docs[0].size() + docs[1].size(), 70u * 1024);
}
