#include "posgeom/base/stop_signals.h"

namespace posgeom {
namespace {

volatile std::sig_atomic_t g_received = 0;

extern "C" void onStopSignal(int signal) { g_received = signal; }

void install(int signal, struct sigaction* previous) {
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // the second signal gets the default action
  sigaction(signal, &action, previous);
}

}  // namespace

StopSignals::StopSignals() {
  g_received = 0;
  install(SIGINT, &previous_int_);
  install(SIGTERM, &previous_term_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

int StopSignals::received() const { return g_received; }

int stopSignalReceived() { return g_received; }

}  // namespace posgeom
