#pragma once
// Numbers in the report's CSV files: the shortest decimal text that reads back as the
// same double (std::to_chars), several times faster than printf's "%.17g" and shorter,
// which matters when a run writes millions of them (pos_L*.csv is T x d a layer).
#include <string>

namespace posgeom::report {

// Appends v's shortest round-trip text to `out` ("nan", "inf", "-inf" for those).
void appendNumber(std::string& out, double v);
std::string numberText(double v);

}  // namespace posgeom::report
