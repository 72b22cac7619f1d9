#include "posgeom/base/log.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Log, LinesReachTheDefaultLoggerAtTheirLevel) {
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_pattern("%l: %v");
  logger->set_level(spdlog::level::info);
  spdlog::set_default_logger(logger);
  log::debug("hidden");
  log::info("shown {} braces");
  log::warn("careful");
  spdlog::set_default_logger(previous);
  EXPECT_EQ(out.str(), "info: shown {} braces\nwarning: careful\n");
}

TEST(Log, TheLevelIsSetByName) {
  const auto previous = spdlog::get_level();
  EXPECT_TRUE(log::setLevel("warning"));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::warn);
  EXPECT_TRUE(log::setLevel("debug"));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);
  EXPECT_TRUE(log::setLevel("off"));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::off);
  EXPECT_FALSE(log::setLevel("loud"));
  EXPECT_EQ(spdlog::get_level(), spdlog::level::off);  // unchanged
  spdlog::set_level(previous);
}

TEST(Log, NumbersAsAsked) {
  EXPECT_EQ(log::number("%.1f", 12.34), "12.3");
  EXPECT_EQ(log::number("%.4f", 0.5), "0.5000");
}

}  // namespace
}  // namespace posgeom::testing
