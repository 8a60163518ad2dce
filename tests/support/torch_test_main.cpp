// main() of the test executables that link the model library: installs the position schemes
// into the config library first (model::install_position_schemes(), as tisa-nn's main does), so
// that configs built or read by the tests know every scheme and its settings, and so that the
// parameterised suites generated from the registry (tests/model/scheme_variants.h) see them when
// InitGoogleTest registers them.
#include <gtest/gtest.h>

#include "model/position/registry.h"

int main(int argc, char** argv) {
  tisa::model::install_position_schemes();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
