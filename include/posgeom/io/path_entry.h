#pragma once
// Whether a directory entry is there by that name, a link to nothing included: what a
// command that must not overwrite, or a lock that must not take a name, asks of a path.
#include <filesystem>

namespace posgeom::io {

bool entryExists(const std::filesystem::path& path);

}  // namespace posgeom::io
