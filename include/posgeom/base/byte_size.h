#pragma once
// Sizes in bytes as people write and read them: options (--max-memory 16G) and messages.
#include <cstdint>
#include <string>

namespace posgeom {

// "800M", "8G", "1.5GiB", "123456" (bytes); throws InputError naming `where`.
int64_t parseByteSize(const std::string& text, const std::string& where);
// "512 B", "1.5 GiB"
std::string formatBytes(int64_t bytes);
// An estimate that may pass what int64 holds (sizes a user's options multiply up):
// formatBytes below 8 EiB, "over 8 EiB" above, never a wrapped or capped number.
std::string formatByteEstimate(long double bytes);

}  // namespace posgeom
