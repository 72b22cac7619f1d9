#include "posgeom/base/log.h"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace posgeom::log {

void debug(const std::string& message) { spdlog::debug("{}", message); }
void info(const std::string& message) { spdlog::info("{}", message); }
void warn(const std::string& message) { spdlog::warn("{}", message); }

std::string number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

}  // namespace posgeom::log
