#pragma once
// TOML 1.0, read with toml++, as JSON: tables, strings, integers, floats (inf and nan too),
// booleans, arrays and inline tables. Keys keep their file order. Dates and times (no JSON
// value), arrays of tables ([[a]]) and dotted keys (a.b = 1) are refused, as the
// hand-written reader before it did: no config uses them.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace posgeom::io {

// Throws InputError("<source>: line N: ...") on anything else (one line).
nlohmann::ordered_json parseToml(const std::string& text, const std::string& source);
// A .toml file, or a .json file (an object) read the same way.
nlohmann::ordered_json readTomlOrJsonFile(const std::filesystem::path& path);

}  // namespace posgeom::io
