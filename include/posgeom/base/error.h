#pragma once
// Errors that carry their exit code: the CLI maps them to DESIGN §6's codes.
#include <stdexcept>
#include <string>

namespace posgeom {

enum class ExitCode : int { kOk = 0, kRegression = 1, kBadInput = 2, kInternal = 3 };

// Bad usage or bad input (exit 2). The message is one line: "<where>: <what>".
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what) {}
};

// A long run stopped before its end, on a signal or as asked, with its state saved
// to resume from. Exit code: 128 + the signal, or 0 for a planned stop.
class RunStopped : public std::runtime_error {
 public:
  RunStopped(const std::string& what, int exit_code) : std::runtime_error(what), exit_code_(exit_code) {}
  int exitCode() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace posgeom
