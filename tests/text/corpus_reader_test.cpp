// Corpus readers of `prepare pretrain` (ALBERT, WikiText, Gutenberg with BOM + CRLF, lines,
// auto-detection) and the sentence splitter, on small hand-written strings.
#include <gtest/gtest.h>

#include "common/error.h"
#include "prep/corpus_reader.h"

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
