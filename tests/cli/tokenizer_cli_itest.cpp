// End-to-end: `tisa-train tokenizer encode` (through the front executable) writes the exact JSONL
// form other tools read, for single texts and for TAB-separated pairs, and fails with exit code 1
// and a message naming a missing tokenizer file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/test_paths.h"

namespace {

using tisa::test::bin_dir;
using tisa::test::make_temp_dir;
using tisa::test::shared_path;

using tisa::test::slurp;

using tisa::test::run;

const char* kBertVocab = "data/tokenizers/bert-base-uncased-vocab.txt";
const char* kAlbertModel = "data/tokenizers/albert-30k-clean.reconstructed.model";

TEST(TokenizerCli, EncodeJsonlExactForm) {
  TISA_REQUIRE_SHARED(kBertVocab);
  TISA_REQUIRE_SHARED(kAlbertModel);
  const std::string dir = make_temp_dir("tok_cli");
  // Third line is empty, fourth only spaces; the last has a CR kept in the text (whitespace) and
  // an invalid byte.
  std::ofstream(dir + "/in.txt", std::ios::binary) << "Hello, World!\n92000, \"x\"\n\n   \nbad \xff byte\r\n";
  const std::string front = bin_dir() + "/tisa-train";
  ASSERT_EQ(run(front + " tokenizer encode --tokenizer " + shared_path(kBertVocab) + " --input " + dir +
                "/in.txt --output " + dir + "/bert.jsonl 2>/dev/null"),
            0);
  EXPECT_EQ(slurp(dir + "/bert.jsonl"),
            "{\"ids\":[7592,1010,2088,999],\"pieces\":[\"hello\",\",\",\"world\",\"!\"]}\n"
            "{\"ids\":[6227,8889,2692,1010,1000,1060,1000],\"pieces\":[\"92\",\"##00\",\"##0\",\",\",\"\\\"\",\"x\",\"\\\"\"]}\n"
            "{\"ids\":[],\"pieces\":[]}\n"
            "{\"ids\":[],\"pieces\":[]}\n"
            "{\"ids\":[2919,24880],\"pieces\":[\"bad\",\"byte\"]}\n");
  ASSERT_EQ(run(front + " tokenizer encode --tokenizer " + shared_path(kAlbertModel) + " --input " + dir +
                "/in.txt --output " + dir + "/albert.jsonl 2>/dev/null"),
            0);
  EXPECT_EQ(slurp(dir + "/albert.jsonl"),
            "{\"ids\":[10975,15,126,187],\"pieces\":[\"\xE2\x96\x81hello\",\",\",\"\xE2\x96\x81world\",\"!\"]}\n"
            "{\"ids\":[561,3050,15,13,7,396,7],\"pieces\":[\"\xE2\x96\x81" "9\",\"2000\",\",\",\"\xE2\x96\x81\",\"\\\"\",\"x\",\"\\\"\"]}\n"
            "{\"ids\":[],\"pieces\":[]}\n"
            "{\"ids\":[],\"pieces\":[]}\n"
            "{\"ids\":[896,34,591],\"pieces\":[\"\xE2\x96\x81" "bad\",\"\xE2\x96\x81" "by\",\"te\"]}\n");
  // Pairs with truncation: 5 + 2 ids into max_length 8 -> 3 + 2; a line without TAB is single.
  std::ofstream(dir + "/pairs.txt", std::ios::binary) << "a b c d e\tx y\nonly one\n";
  ASSERT_EQ(run(front + " tokenizer encode --pairs --max-length 8 --tokenizer " + shared_path(kBertVocab) +
                " --input " + dir + "/pairs.txt --output " + dir + "/pairs.jsonl 2>/dev/null"),
            0);
  EXPECT_EQ(slurp(dir + "/pairs.jsonl"),
            "{\"input_ids\":[101,1037,1038,1039,102,1060,1061,102],\"token_type_ids\":[0,0,0,0,0,1,1,1]}\n"
            "{\"input_ids\":[101,2069,2028,102],\"token_type_ids\":[0,0,0,0]}\n");
  // A missing tokenizer: exit code 1, message names the path.
  EXPECT_EQ(run(front + " tokenizer encode --tokenizer " + dir + "/nope.model --input " + dir + "/in.txt --output " +
                dir + "/x.jsonl 2>" + dir + "/err.txt"),
            1);
  EXPECT_NE(slurp(dir + "/err.txt").find(dir + "/nope.model"), std::string::npos) << slurp(dir + "/err.txt");
}

TEST(TokenizerCli, TrainThenEncode) {
  TISA_REQUIRE_SHARED("data/corpus/gutenberg/pg11-0.txt");
  const std::string dir = make_temp_dir("tok_cli_train");
  const std::string front = bin_dir() + "/tisa-train";
  ASSERT_EQ(run(front + " tokenizer train --type wordpiece --vocab-size 1500 --input " +
                shared_path("data/corpus/gutenberg/pg11-0.txt") + " --output " + dir + "/wp 2>/dev/null"),
            0);
  std::ofstream(dir + "/in.txt") << "Alice was beginning to get very tired\n";
  ASSERT_EQ(run(front + " tokenizer encode --tokenizer " + dir + "/wp --input " + dir + "/in.txt --output " + dir +
                "/out.jsonl 2>/dev/null"),
            0);
  const std::string out = slurp(dir + "/out.jsonl");
  EXPECT_EQ(out.rfind("{\"ids\":[", 0), 0u) << out;
  EXPECT_NE(out.find("\"alice\""), std::string::npos) << out;
}

}  // namespace
