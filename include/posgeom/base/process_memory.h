#pragma once
// The process's own resident memory (Linux /proc), for benchmarks, and what the machine
// has left for it.
#include <cstdint>
#include <optional>

namespace posgeom {

// Bytes the machine can still give this process: MemAvailable, or the container's
// (cgroup's) room, or the address space left under `ulimit -v`, whichever is least;
// nullopt where none can be read.
std::optional<int64_t> availableHostMemory();
// The peak resident set size so far (VmHWM), in bytes; 0 where it cannot be read.
int64_t peakResidentBytes();
// The resident set size now (VmRSS), in bytes; 0 where it cannot be read.
int64_t residentBytes();
// Returns freed heap memory to the system (glibc malloc_trim), so that the resident size
// is what is in use.
void releaseFreeMemory();
// Starts a new peak at the current resident size (Linux >= 4.0); false if it could not.
bool resetPeakResident();

}  // namespace posgeom
