#include "posgeom/base/environment.h"

#include <cstdlib>

namespace posgeom {

EnvLookup processEnv() {
  return [](const char* key) -> std::optional<std::string> {
    const char* v = std::getenv(key);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

}  // namespace posgeom
