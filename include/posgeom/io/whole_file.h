#pragma once
// Small input files (configs, tokenizer files) read whole, with the faults a user can
// act on: missing, not a file, unreadable.
#include <filesystem>
#include <string>

namespace posgeom::io {

// Throws InputError naming the path.
std::string readWholeFile(const std::filesystem::path& path);

}  // namespace posgeom::io
