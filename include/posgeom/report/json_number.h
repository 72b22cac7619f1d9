#pragma once
// A number for summary.json: JSON has no NaN or infinity, so those become null (a
// measurement that does not apply, or was not made).
#include <cmath>
#include <nlohmann/json.hpp>

namespace posgeom::report {

inline nlohmann::json finiteOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace posgeom::report
