#include "posgeom/base/byte_size.h"

#include <cmath>
#include <cstdio>

#include "posgeom/base/error.h"

namespace posgeom {

int64_t parseByteSize(const std::string& text, const std::string& where) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'i') unit.pop_back();
  int shift = -1;
  if (unit.empty()) shift = 0;
  else if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (unit == "T" || unit == "t") shift = 40;
  if (used == 0 || shift < 0 || !(value > 0) || value * std::ldexp(1.0, shift) > 9e18)
    throw InputError(where, "'" + text + "' is not a size (use bytes or K, M, G, T: 800M, 16G)");
  return static_cast<int64_t>(value * std::ldexp(1.0, shift));
}

std::string formatBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::abs(value) >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buf;
}

std::string formatByteEstimate(long double bytes) {
  return bytes > 9e18L ? std::string("over 8 EiB") : formatBytes(static_cast<int64_t>(bytes));
}

}  // namespace posgeom
