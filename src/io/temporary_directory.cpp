#include "posgeom/io/temporary_directory.h"

#include <stdlib.h>

#include "posgeom/base/error.h"

namespace posgeom::io {
namespace fs = std::filesystem;

TemporaryDirectory::TemporaryDirectory(const std::string& purpose) {
  std::string pattern = (fs::temp_directory_path() / ("posgeom-" + purpose + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) throw InputError(pattern, "cannot create a temporary directory");
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace posgeom::io
