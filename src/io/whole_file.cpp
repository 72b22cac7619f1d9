#include "posgeom/io/whole_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "posgeom/base/error.h"

namespace posgeom::io {

std::string readWholeFile(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw InputError(path.string(), "does not exist");
  if (!std::filesystem::is_regular_file(status)) throw InputError(path.string(), "is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), std::string("cannot be read: ") + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(path.string(), "read error");
  return buffer.str();
}

}  // namespace posgeom::io
