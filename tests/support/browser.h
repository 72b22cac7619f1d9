#pragma once
// Headless Chromium for the report tests: the DOM after load (scripts run) and screenshots.
#include <filesystem>
#include <string>

namespace posgeom::testing {

// Debian's chromium, or $POSGEOM_CHROMIUM; empty when there is none.
std::string chromiumBinary();
// The serialized DOM of `page` after loading it in a window of the given size.
std::string dumpDom(const std::filesystem::path& page, int width, int height);
// A PNG screenshot of the top of `page`.
std::string screenshot(const std::filesystem::path& page, int width, int height);

}  // namespace posgeom::testing

// Skips (fails under CI=true) without a browser.
#define POSGEOM_REQUIRE_CHROMIUM()                                                                \
  do {                                                                                            \
    if (::posgeom::testing::chromiumBinary().empty()) {                                           \
      if (::posgeom::testing::runningInCi()) FAIL() << "chromium is not installed (tools/bootstrap)"; \
      GTEST_SKIP() << "chromium is not installed";                                                \
    }                                                                                             \
  } while (0)
