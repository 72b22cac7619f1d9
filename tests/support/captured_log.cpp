#include "captured_log.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

namespace posgeom::testing {

struct CapturedLog::Capture {
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
};

CapturedLog::CapturedLog() : capture_(std::make_unique<Capture>()) {
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(capture_->text)));
}

CapturedLog::~CapturedLog() { spdlog::set_default_logger(capture_->previous); }

std::string CapturedLog::str() const { return capture_->text.str(); }

}  // namespace posgeom::testing
