#include "posgeom/io/path_entry.h"

namespace posgeom::io {

bool entryExists(const std::filesystem::path& path) {
  // An entry that cannot be looked at (a directory above it unreadable) counts as there:
  // the callers must not overwrite or claim what they cannot see.
  std::error_code ec;
  return std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found;
}

}  // namespace posgeom::io
