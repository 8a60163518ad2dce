// End-to-end: `tisa-train prepare pretrain` (through the front executable) on real corpus files
// writes a dataset that the torch-free reader, example builder and loader accept; bad input gives
// exit code 1 with a message naming the file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/run_directory.h"
#include "data/pretrain_loader.h"
#include "support/test_paths.h"

namespace {

using tisa::test::bin_dir;
using tisa::test::make_temp_dir;
using tisa::test::shared_path;

using tisa::test::run;

using tisa::test::slurp;

const char* kBook = "data/corpus/gutenberg/pg11-0.txt";
const char* kWiki = "data/corpus/wikitext-2-raw/wiki.valid.raw";
const char* kAlbert = "data/tokenizers/albert-30k-clean.reconstructed.model";

}  // namespace

TEST(PreparePretrainCli, WritesALoadableDataset) {
  TISA_REQUIRE_SHARED(kBook);
  TISA_REQUIRE_SHARED(kWiki);
  TISA_REQUIRE_SHARED(kAlbert);
  const std::string dir = make_temp_dir("prep_cli"), out = dir + "/ds";
  const std::string cmd = bin_dir() + "/tisa-train prepare pretrain --input " + shared_path(kBook) + " " +
                          shared_path(kWiki) + " --tokenizer " + shared_path(kAlbert) + " --output " + out +
                          " --valid-fraction 0.05 --threads 2 --seed 3 > " + dir + "/log.txt 2>&1";
  ASSERT_EQ(run(cmd), 0) << slurp(dir + "/log.txt");
  const std::string log = slurp(dir + "/log.txt");
  EXPECT_NE(log.find("gutenberg format"), std::string::npos) << log;
  EXPECT_NE(log.find("wikitext format"), std::string::npos) << log;
  EXPECT_NE(log.find("MB/s"), std::string::npos) << log;
  EXPECT_NE(log.find("valid split:"), std::string::npos) << log;

  {  // (scoped: the mapping and the loader's threads must be gone before the file is truncated)
    auto ds = std::make_shared<const tisa::data::PretrainDataset>(out);
    EXPECT_EQ(ds->header().tokenizer.type, "sentencepiece");
    EXPECT_EQ(ds->header().train.documents + ds->header().valid.documents, 13 + 60);
    const auto& h = ds->header();
    EXPECT_GE(h.valid.documents, 1);
    EXPECT_LT(static_cast<double>(h.valid.tokens) / static_cast<double>(h.train.tokens + h.valid.tokens),
              0.15);  // each document drawn with probability 0.05
    tisa::data::ExampleOptions o;
    o.max_seq_length = 128;
    auto builder = std::make_shared<tisa::data::ExampleBuilder>(ds, "train", o);
    tisa::data::LoaderOptions lo;
    lo.batch_size = 8;
    lo.workers = 2;
    tisa::data::PretrainBatchLoader loader(builder, lo);
    tisa::data::PretrainBatch b;
    ASSERT_TRUE(loader.next(b));
    EXPECT_EQ(b.batch_size, 8);
    EXPECT_LE(b.seq_len, 128);
    EXPECT_EQ(b.input_ids[0], 2);  // [CLS]
    EXPECT_FALSE(b.masked_positions.empty());
  }

  // a truncated split file is reported with its name and the command to re-run
  std::filesystem::resize_file(out + "/shards/00000/train.sentences.bin", 100);
  try {
    tisa::data::PretrainDataset broken(out);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("train.sentences.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tisa-train prepare pretrain"), std::string::npos) << e.what();
  }
}

TEST(PreparePretrainCli, BadInputsExitWithOne) {
  TISA_REQUIRE_SHARED(kBook);
  const std::string dir = make_temp_dir("prep_cli_bad");
  const std::string base = bin_dir() + "/tisa-train prepare pretrain --input " + shared_path(kBook) + " --output " +
                           dir + "/ds ";
  EXPECT_EQ(run(base + "--tokenizer " + dir + "/missing.model > " + dir + "/log1.txt 2>&1"), 1);
  EXPECT_NE(slurp(dir + "/log1.txt").find("missing.model"), std::string::npos) << slurp(dir + "/log1.txt");
  EXPECT_EQ(run(base + "--tokenizer " + shared_path(kAlbert) + " --format xml > " + dir + "/log2.txt 2>&1"), 1);
  EXPECT_NE(slurp(dir + "/log2.txt").find("unknown corpus format 'xml'"), std::string::npos);
}

// Issue 36, point 4: two preparations into one folder would interleave their files; the second
// is refused by the folder's lock, naming the owner.
TEST(PreparePretrainCli, ASecondPreparationIntoTheSameFolderIsRefused) {
  TISA_REQUIRE_SHARED(kAlbert);
  const std::string dir = make_temp_dir("prep_cli_lock"), out = dir + "/ds";
  const tisa::RunDirectory other(out, tisa::RunDirectory::Start::kNew, "--output");  // a preparation in progress
  const std::string cmd = bin_dir() + "/tisa-train prepare pretrain --input " + tisa::test::source_dir() +
                          "/data/sample/corpus/alice.txt --tokenizer " + shared_path(kAlbert) + " --output " + out +
                          " --threads 1 > " + dir + "/log.txt 2>&1";
  EXPECT_EQ(run(cmd), 1) << slurp(dir + "/log.txt");
  EXPECT_NE(slurp(dir + "/log.txt").find("--output folder " + out + " is in use by another tisa-train process"),
            std::string::npos)
      << slurp(dir + "/log.txt");
  EXPECT_FALSE(std::filesystem::exists(out + "/header.json"));
}

// Issue 33: a folder, a glob and a gzip-compressed JSON Lines file are inputs like any file; two
// datasets prepared apart combine into one (`prepare combine`), counts adding up, and a combined
// dataset of different tokenizers is refused.
TEST(PreparePretrainCli, FoldersGlobsJsonlGzipAndCombine) {
  TISA_REQUIRE_SHARED(kBook);
  TISA_REQUIRE_SHARED(kWiki);
  TISA_REQUIRE_SHARED(kAlbert);
  const std::string dir = make_temp_dir("prep_cli_forms");
  std::filesystem::create_directories(dir + "/corpus/books");
  std::filesystem::copy_file(shared_path(kBook), dir + "/corpus/books/alice.txt");
  {
    std::ofstream j(dir + "/corpus/articles.jsonl");
    j << "{\"id\": 1, \"text\": \"An article. It has two sentences.\\nA second paragraph.\"}\n"
      << "{\"id\": 2, \"text\": \"Another article, short.\"}\n";
  }
  ASSERT_EQ(run("gzip " + dir + "/corpus/articles.jsonl"), 0);
  const std::string tool = bin_dir() + "/tisa-train prepare pretrain --tokenizer " + shared_path(kAlbert) +
                           " --valid-fraction 0 --threads 1 ";
  ASSERT_EQ(run(tool + "--input " + dir + "/corpus/books '" + dir + "/corpus/*.gz' --output " + dir + "/a > " + dir +
                "/a.txt 2>&1"),
            0)
      << slurp(dir + "/a.txt");
  const std::string log = slurp(dir + "/a.txt");
  EXPECT_NE(log.find("articles.jsonl.gz: read"), std::string::npos) << log;
  EXPECT_NE(log.find("(gzip), jsonl format"), std::string::npos) << log;
  EXPECT_NE(log.find("dropped"), std::string::npos) << log;  // the book's header and licence, reported
  ASSERT_EQ(run(tool + "--input " + shared_path(kWiki) + " --output " + dir + "/b > " + dir + "/b.txt 2>&1"), 0)
      << slurp(dir + "/b.txt");
  ASSERT_EQ(run(bin_dir() + "/tisa-train prepare combine --input " + dir + "/a " + dir + "/b --output " + dir +
                "/ab > " + dir + "/ab.txt 2>&1"),
            0)
      << slurp(dir + "/ab.txt");
  const tisa::data::PretrainDataset a(dir + "/a"), b(dir + "/b"), ab(dir + "/ab");
  EXPECT_EQ(a.header().train.documents, 13 + 2);
  EXPECT_EQ(ab.header().train.tokens, a.header().train.tokens + b.header().train.tokens);
  EXPECT_EQ(ab.split("train").num_documents(), a.header().train.documents + b.header().train.documents);
  EXPECT_EQ(ab.header().shards.size(), 2u);

  // a dataset of another tokenizer cannot join
  const char* kBert = "data/tokenizers/bert-base-uncased-vocab.txt";
  if (tisa::test::file_exists(shared_path(kBert))) {
    ASSERT_EQ(run(bin_dir() + "/tisa-train prepare pretrain --tokenizer " + shared_path(kBert) +
                  " --valid-fraction 0 --threads 1 --input " + shared_path(kWiki) + " --output " + dir + "/c > " +
                  dir + "/c.txt 2>&1"),
              0);
    EXPECT_EQ(run(bin_dir() + "/tisa-train prepare combine --input " + dir + "/a " + dir + "/c --output " + dir +
                  "/ac > " + dir + "/ac.txt 2>&1"),
              1);
    EXPECT_NE(slurp(dir + "/ac.txt").find("different tokenizers"), std::string::npos) << slurp(dir + "/ac.txt");
  }
}
