#pragma once
// Work items shared out over a few threads, the caller's among them: for end stages whose
// items (layers, heads, row blocks) are few and large, where a pool would be overkill.
#include <cstddef>
#include <functional>

namespace posgeom {

// body(i) for every i in [0, count), on min(workers, count) threads (0 or 1: in order on
// the caller's). Items are taken in order as threads come free. When a call throws, no
// new items start, and the first exception is rethrown once every thread has stopped.
void parallelFor(std::size_t count, unsigned workers, const std::function<void(std::size_t)>& body);

}  // namespace posgeom
