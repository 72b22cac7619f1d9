#include "posgeom/io/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "posgeom/base/error.h"

namespace posgeom::io {

void writeFileAtomically(const std::filesystem::path& path,
                         const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const std::string& why) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw InputError(path.string(), "cannot write: " + why);
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(std::strerror(errno));
    try {
      write(out);
    } catch (...) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
    out.flush();
    if (!out) fail("write failed (disk full?)");
    out.close();
    if (!out) fail("close failed (disk full?)");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) fail(ec.message());
}

void writeTextFileAtomically(const std::filesystem::path& path, const std::string& text) {
  writeFileAtomically(path, [&](std::ostream& out) { out << text; });
}

}  // namespace posgeom::io
