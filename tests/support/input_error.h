#pragma once
// What a call refuses: the InputError's message, or "" when it throws none (a test then
// fails on the message it expected).
#include <functional>
#include <string>

#include "posgeom/base/error.h"

namespace posgeom::testing {

inline std::string inputErrorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace posgeom::testing

// The call refuses with a message that starts with `prefix`.
#define EXPECT_INPUT_ERROR(call, prefix)                                                   \
  do {                                                                                     \
    const std::string posgeom_message_ = ::posgeom::testing::inputErrorOf([&] { (void)(call); }); \
    EXPECT_EQ(posgeom_message_.rfind(prefix, 0), 0u) << "message: " << posgeom_message_;   \
  } while (0)
