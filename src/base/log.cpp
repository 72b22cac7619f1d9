#include "posgeom/base/log.h"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace posgeom::log {

void debug(const std::string& message) { spdlog::debug("{}", message); }
void info(const std::string& message) { spdlog::info("{}", message); }
void warn(const std::string& message) { spdlog::warn("{}", message); }

bool setLevel(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") return false;
  spdlog::set_level(parsed);
  return true;
}

std::string number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

}  // namespace posgeom::log
