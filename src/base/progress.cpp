#include "posgeom/base/progress.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cmath>

namespace posgeom {
namespace {

std::string duration(double seconds) {
  char buf[32];
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s >= 3600) std::snprintf(buf, sizeof(buf), "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60) std::snprintf(buf, sizeof(buf), "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(buf, sizeof(buf), "%llds", s);
  return buf;
}

}  // namespace

ProgressLine::ProgressLine(std::string what, int64_t total, std::string unit, Mode mode, std::FILE* terminal)
    : what_(std::move(what)), unit_(std::move(unit)), total_(total), mode_(mode), terminal_(terminal),
      start_(std::chrono::steady_clock::now()), last_(start_) {
  if (mode_ == Mode::kAuto) mode_ = terminal_ && ::isatty(::fileno(terminal_)) ? Mode::kTerminal : Mode::kLog;
  if (!spdlog::should_log(spdlog::level::info)) terminal_ = nullptr;  // --quiet
}

ProgressLine::~ProgressLine() { finish(); }

std::string ProgressLine::format(const std::string& what, int64_t done, int64_t total, const std::string& unit, int64_t tokens,
                                 double elapsed_s, const std::string& detail) {
  std::string line = what + ": " + std::to_string(done) + (total > 0 ? " / " + std::to_string(total) : "") + " " + unit;
  if (tokens > 0 && elapsed_s > 0) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), ", %lld tokens, %.0f tokens/s", static_cast<long long>(tokens), static_cast<double>(tokens) / elapsed_s);
    line += buf;
  }
  if (total > 0 && done > 0 && done < total) line += ", ETA " + duration(elapsed_s * static_cast<double>(total - done) / static_cast<double>(done));
  if (!detail.empty()) line += ", " + detail;
  return line;
}

void ProgressLine::update(int64_t done, int64_t tokens, const std::string& detail) {
  if (!terminal_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (since < (mode_ == Mode::kTerminal ? 0.2 : 10.0)) return;
  last_ = now;
  const auto line = format(what_, done, total_, unit_, tokens, std::chrono::duration<double>(now - start_).count(), detail);
  if (mode_ == Mode::kTerminal) {
    std::fprintf(terminal_, "\r\033[2K%s", line.c_str());  // clear the line, then draw
    std::fflush(terminal_);
    drawn_ = true;
  } else {
    spdlog::info("{}", line);
  }
}

void ProgressLine::finish() {
  if (drawn_ && terminal_) {
    std::fprintf(terminal_, "\r\033[2K");
    std::fflush(terminal_);
  }
  drawn_ = false;
}

}  // namespace posgeom
