// Position variants from the command line (config/position_variant.h): `model variants` lists
// absolute, absolute_<scheme> and <scheme> for every scheme of `model schemes` (the registry);
// --check and `pretrain --position` refuse an unknown name with the forms and the schemes.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "support/expect_error.h"
#include "support/test_paths.h"

namespace {

using tisa::test::bin_dir;
using tisa::test::make_temp_dir;
using tisa::test::run;
using tisa::test::slurp;
using tisa::test::source_dir;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

TEST(PositionVariantCli, EveryRegistrySchemeIsAVariant) {
  const std::string tmp = make_temp_dir("variants_cli");
  ASSERT_EQ(run(bin_dir() + "/tisa-train model schemes > " + tmp + "/schemes.txt"), 0);
  ASSERT_EQ(run(bin_dir() + "/tisa-train model variants > " + tmp + "/variants.txt"), 0);
  const auto schemes = lines_of(slurp(tmp + "/schemes.txt"));
  ASSERT_FALSE(schemes.empty());
  EXPECT_EQ(schemes.front(), "none");
  std::vector<std::string> expected{"absolute"};
  for (const auto& s : schemes) {
    if (s != "none") expected.push_back("absolute_" + s);
    expected.push_back(s);
  }
  EXPECT_EQ(lines_of(slurp(tmp + "/variants.txt")), expected);
  std::string all;
  for (const auto& v : expected) all += (all.empty() ? "" : ",") + v;
  EXPECT_EQ(run(bin_dir() + "/tisa-train model variants --check " + all + " 2> " + tmp + "/err.txt"), 0)
      << slurp(tmp + "/err.txt");
  EXPECT_EQ(run(bin_dir() + "/tisa-train model variants --check absolute+tisa 2> " + tmp + "/err.txt"), 0);
}

TEST(PositionVariantCli, UnknownNamesAreRefusedWithTheForms) {
  const std::string tmp = make_temp_dir("variants_cli");
  EXPECT_NE(run(bin_dir() + "/tisa-train model variants --check absolute,tisa_absolute 2> " + tmp + "/err.txt"), 0);
  EXPECT_HAS(slurp(tmp + "/err.txt"),
             "model variants --check: unknown position variant 'tisa_absolute' (expected absolute, <scheme> or "
             "absolute_<scheme>; schemes: none, shaw, tisa");
  const std::string runs = tmp + "/run";
  EXPECT_NE(run("cd " + tmp + " && " + bin_dir() + "/tisa-train pretrain --config " + source_dir() +
                "/configs/pretrain/tiny.yaml --position abs --run-dir " + runs + " 2> " + tmp + "/err.txt"),
            0);
  EXPECT_HAS(slurp(tmp + "/err.txt"), "pretrain --position: unknown position variant 'abs'");
}

}  // namespace
