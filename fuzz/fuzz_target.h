#pragma once
// Each fuzz target is a plain function over bytes, so that the regression tests (built
// with the rest, by GCC) can call it on the saved inputs. Only in the fuzzing build
// (clang -fsanitize=fuzzer, POSGEOM_FUZZING) does it become libFuzzer's entry point.
// A target may throw posgeom::InputError (the bad input was refused: fine); anything
// else it throws, and every crash or sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "posgeom/base/error.h"

namespace posgeom::fuzz {

void safetensorsHeader(const uint8_t* data, std::size_t size);
void modelConfig(const uint8_t* data, std::size_t size);
void tokenizerJson(const uint8_t* data, std::size_t size);
void corpusReaders(const uint8_t* data, std::size_t size);
void checkReference(const uint8_t* data, std::size_t size);
void tomlConfig(const uint8_t* data, std::size_t size);

// A per-process scratch directory for targets whose parsers read files.
std::filesystem::path scratchDir();
void writeBytes(const std::filesystem::path& path, const uint8_t* data, std::size_t size);

}  // namespace posgeom::fuzz

#ifdef POSGEOM_FUZZING
#define POSGEOM_FUZZ_ENTRY(target)                                           \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    try {                                                                    \
      target(data, size);                                                    \
    } catch (const posgeom::InputError&) {                                   \
    }                                                                        \
    return 0;                                                                \
  }
#else
#define POSGEOM_FUZZ_ENTRY(target)
#endif
