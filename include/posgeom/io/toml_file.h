#pragma once
// The part of TOML that posgeom's config files use: tables ([a] and [a.b]), key = value
// with strings (basic and literal), integers, floats, booleans, arrays (multi-line too)
// and inline tables; comments. Keys keep their file order.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace posgeom::io {

// Throws InputError("<source>: line N: ...") on anything else.
nlohmann::ordered_json parseToml(const std::string& text, const std::string& source);
// A .toml file, or a .json file (an object) read the same way.
nlohmann::ordered_json readTomlOrJsonFile(const std::filesystem::path& path);

}  // namespace posgeom::io
