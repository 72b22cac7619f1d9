#pragma once
// The shell every posgeom HTML page shares: one self-contained document (inline CSS, no
// scripts, nothing fetched), so report.html and a sweep's series.html look alike.
#include <string>

namespace posgeom::report {

// <!DOCTYPE html> through <body>, with the title (escaped) in <title>.
std::string pageStart(const std::string& title);
std::string pageEnd();

}  // namespace posgeom::report
