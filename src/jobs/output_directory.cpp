#include "posgeom/jobs/output_directory.h"

#include "posgeom/base/error.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;

OutputDirectory::OutputDirectory(const fs::path& out, bool force) : out_(out) {
  std::error_code ec;
  if (!force && fs::is_directory(out, ec) && !fs::is_empty(out, ec))
    throw InputError(out.string(), "exists and is not empty; pass --force to write into it");
  created_ = fs::create_directories(out, ec);
  if (ec) throw InputError(out.string(), "cannot create the output directory: " + ec.message());
}

OutputDirectory::~OutputDirectory() {
  std::error_code ec;
  if (created_ && fs::is_empty(out_, ec)) fs::remove(out_, ec);
}

}  // namespace posgeom::jobs
