#pragma once
// Seconds of wall time since a point on the steady clock: what every timing of a run
// (load, forward, end stages) and of bench is measured with.
#include <chrono>

namespace posgeom {

using SteadyClock = std::chrono::steady_clock;

inline double secondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace posgeom
