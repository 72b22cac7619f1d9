#include "posgeom/base/stop_signals.h"

#include <gtest/gtest.h>

#include <csignal>

namespace posgeom {
namespace {

TEST(StopSignals, TheFirstSignalIsRecordedNotFatal) {
  const StopSignals signals;
  EXPECT_EQ(signals.received(), 0);
  std::raise(SIGTERM);  // would end the test binary without the handler
  EXPECT_EQ(signals.received(), SIGTERM);
}

TEST(StopSignals, TheHandlersBeforeComeBackAfterwards) {
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  { const StopSignals signals; }
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  const StopSignals again;
  EXPECT_EQ(again.received(), 0);  // a new pass starts clean
}

TEST(StopSignals, ASecondSignalGetsTheDefaultAction) {
  EXPECT_EXIT(
      {
        const StopSignals signals;
        std::raise(SIGINT);
        std::raise(SIGINT);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

}  // namespace
}  // namespace posgeom
