#pragma once
// How many single-character insertions, deletions and substitutions turn one string into
// another (Levenshtein): what "did you mean ...?" hints rank the known names by.
#include <cstddef>
#include <string>

namespace posgeom {

std::size_t editDistance(const std::string& a, const std::string& b);

}  // namespace posgeom
