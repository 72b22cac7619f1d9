#pragma once
// Outputs appear whole or not at all: write to a temporary name, then rename.
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

namespace posgeom::io {

// Calls write(stream) on a temporary file beside `path`, checks that every byte
// reached the disk, then renames it over `path`. On any failure the temporary
// file is removed and InputError names `path` and the reason (a full disk too).
void writeFileAtomically(const std::filesystem::path& path,
                         const std::function<void(std::ostream&)>& write);

void writeTextFileAtomically(const std::filesystem::path& path, const std::string& text);

}  // namespace posgeom::io
