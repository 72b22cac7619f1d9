#include "posgeom/report/number_text.h"

#include <charconv>
#include <system_error>

namespace posgeom::report {

void appendNumber(std::string& out, double v) {
  char buf[32];  // the longest shortest form, "-2.2250738585072014e-308", is 24
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec == std::errc()) out.append(buf, end);
}

std::string numberText(double v) {
  std::string s;
  appendNumber(s, v);
  return s;
}

}  // namespace posgeom::report
