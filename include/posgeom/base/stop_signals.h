#pragma once
// SIGINT and SIGTERM during a long pass: while a StopSignals lives, the first one only
// asks the pass to stop at its next safe point (after a batch, with its state saved);
// a second one kills as usual, so a stuck run can still be ended.
#include <csignal>

namespace posgeom {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // restores the ones before
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal received since construction, 0 if none.
  int received() const;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// The stop signal a live StopSignals received (0: none, or no StopSignals), for waits
// outside the pass's loop: a read from a pipe that gives no data must end on it too.
int stopSignalReceived();

}  // namespace posgeom
