// Position variant names (config/position_variant.h) over the installed registry: every name
// parses back to its config and is that config's canonical name; the listing is sorted by
// position_variant_order (absolute first, absolute_<scheme> before <scheme>, registry order).
#include <gtest/gtest.h>

#include <algorithm>

#include "config/config.h"
#include "config/position_variant.h"
#include "model/position/registry.h"
#include "support/expect_error.h"

namespace {

using tisa::config::parse_position_variant;

TEST(PositionVariant, EveryNameParsesToItsConfig) {
  const auto names = tisa::config::position_variant_names();
  EXPECT_EQ(names.front(), "absolute");
  EXPECT_EQ(names.size(), 2 * tisa::model::relative_scheme_names().size());  // absolute, none, 2 per scheme
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    tisa::config::ModelConfig m;
    tisa::config::apply_position_variant(name, m, "test");
    EXPECT_EQ(tisa::config::position_variant_name(m), name);
  }
  for (const auto& scheme : tisa::model::relative_scheme_names()) {
    const auto alone = parse_position_variant(scheme);
    ASSERT_TRUE(alone) << scheme;
    EXPECT_FALSE(alone->absolute);
    EXPECT_EQ(alone->relative, scheme);
    const auto both = parse_position_variant("absolute+" + scheme);
    ASSERT_TRUE(both) << scheme;
    EXPECT_TRUE(both->absolute);
    EXPECT_EQ(both->relative, scheme);
  }
  EXPECT_FALSE(parse_position_variant("tisa_absolute"));
  EXPECT_FALSE(parse_position_variant("absolute_"));
  EXPECT_FALSE(parse_position_variant(""));
}

TEST(PositionVariant, ListingIsInVariantOrder) {
  auto names = tisa::config::position_variant_names();
  auto sorted = names;
  std::stable_sort(sorted.begin(), sorted.end(), [](const std::string& a, const std::string& b) {
    return tisa::config::position_variant_order(a) < tisa::config::position_variant_order(b);
  });
  EXPECT_EQ(sorted, names);
  EXPECT_LT(tisa::config::position_variant_order("absolute_tisa"), tisa::config::position_variant_order("tisa"));
  EXPECT_LT(tisa::config::position_variant_order("sinusoidal"), tisa::config::position_variant_order("not_a_variant"));
}

TEST(PositionVariant, UnknownNameNamesTheFormsAndSchemes) {
  tisa::config::ModelConfig m;
  const std::string msg = tisa::test::error_of([&] { tisa::config::apply_position_variant("rope2", m, "--position"); });
  EXPECT_HAS(msg, "--position: unknown position variant 'rope2' (expected absolute, <scheme> or absolute_<scheme>; "
                  "schemes: none, shaw, tisa, rope");
}

}  // namespace
