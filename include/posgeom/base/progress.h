#pragma once
// Progress of a long step: on a terminal one line redrawn in place (done / total, tokens,
// tokens/s, ETA, what it is on now); otherwise a plain log line every 10 s. Silent when
// the log level is above info (--quiet).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace posgeom {

class ProgressLine {
 public:
  enum class Mode { kAuto, kTerminal, kLog };
  // `total` 0: unknown. `unit` names what is counted ("windows", "layers").
  ProgressLine(std::string what, int64_t total, std::string unit, Mode mode = Mode::kAuto, std::FILE* terminal = stderr);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `tokens` 0: no token rate. `detail`: what it is on now, e.g. "layer 7".
  void update(int64_t done, int64_t tokens = 0, const std::string& detail = "");
  // Ends the terminal line (the next log line starts clean).
  void finish();

  // The text of one progress line.
  static std::string format(const std::string& what, int64_t done, int64_t total, const std::string& unit, int64_t tokens,
                            double elapsed_s, const std::string& detail);

 private:
  std::string what_, unit_;
  int64_t total_;
  Mode mode_;
  std::FILE* terminal_;
  std::chrono::steady_clock::time_point start_, last_;
  bool drawn_ = false;
};

}  // namespace posgeom
