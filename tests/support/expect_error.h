// Checking error messages: error_of() runs a callable that must throw tisa::Error and returns its
// message; EXPECT_HAS checks that a message names what it should (file, line, key, expectation).
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"

namespace tisa::test {

template <class F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const tisa::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected tisa::Error";
  return "";
}

}  // namespace tisa::test

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "message was:\n" << (haystack)
