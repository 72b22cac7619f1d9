#include "posgeom/base/progress.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Progress, LineSaysDoneTotalRateEtaAndDetail) {
  EXPECT_EQ(ProgressLine::format("analyze", 100, 400, "windows", 51200, 20.0, "layer 7"),
            "analyze: 100 / 400 windows, 51200 tokens, 2560 tokens/s, ETA 1m00s, layer 7");
  EXPECT_EQ(ProgressLine::format("heads", 3, 0, "layers", 0, 5.0, ""), "heads: 3 layers");  // total unknown: no ETA
  EXPECT_EQ(ProgressLine::format("a", 1, 2, "w", 0, 7200.0, ""), "a: 1 / 2 w, ETA 2h00m");
}

TEST(Progress, TerminalLineIsRedrawnInPlaceAndClearedAtTheEnd) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressLine p("analyze", 10, "windows", ProgressLine::Mode::kTerminal, f);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    p.update(5, 640);
  }
  std::rewind(f);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  EXPECT_EQ(text.rfind("\r\033[2Kanalyze: 5 / 10 windows, 640 tokens, ", 0), 0u) << text;
  EXPECT_EQ(text.substr(text.size() - 5), "\r\033[2K");  // cleared, so the next log line starts clean
  EXPECT_EQ(text.find('\n'), std::string::npos);
}

TEST(Progress, QuietDrawsNothing) {
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::warn);
  std::FILE* f = std::tmpfile();
  {
    ProgressLine p("analyze", 10, "windows", ProgressLine::Mode::kTerminal, f);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    p.update(5, 640);
  }
  EXPECT_EQ(std::ftell(f), 0);
  std::fclose(f);
  spdlog::set_level(level);
}

}  // namespace
}  // namespace posgeom::testing
