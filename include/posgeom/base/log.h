#pragma once
// Log lines for the translation units that include Torch: a CUDA LibTorch 2.x ships its
// own, newer fmt in its include directory, which spdlog (built against Debian's) cannot
// compile with, so those units log through here with messages made beforehand.
#include <string>

namespace posgeom::log {

void debug(const std::string& message);
void info(const std::string& message);
void warn(const std::string& message);
// The level of every log line from here on: trace, debug, info, warning (warn), error,
// critical or off; false (nothing changed) for another name.
bool setLevel(const std::string& level);
// printf-style number formatting for those messages ("%.1f").
std::string number(const char* format, double value);

}  // namespace posgeom::log
