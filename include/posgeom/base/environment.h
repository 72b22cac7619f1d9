#pragma once
// Reading environment variables through a function, so that tests need not touch the
// process environment.
#include <functional>
#include <optional>
#include <string>

namespace posgeom {

// The value of a variable; nullopt when unset or empty.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
EnvLookup processEnv();

}  // namespace posgeom
