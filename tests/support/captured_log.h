#pragma once
// What is logged through spdlog's default logger while one of these lives: warnings a test
// asserts on. spdlog stays in captured_log.cpp: a CUDA LibTorch 2.x brings its own fmt,
// which spdlog cannot compile with, into every suite that links Torch (base/log.h).
#include <memory>
#include <string>

namespace posgeom::testing {

class CapturedLog {
 public:
  CapturedLog();
  ~CapturedLog();
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::string str() const;

 private:
  struct Capture;
  std::unique_ptr<Capture> capture_;
};

}  // namespace posgeom::testing
