#pragma once
// FNV-1a over the ids analysed: identifies the data of a run without keeping it.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace posgeom::pass {

struct TokenHash {
  uint64_t value = 1469598103934665603ull;
  void add(const std::vector<int32_t>& ids) {
    for (int32_t id : ids)
      for (int b = 0; b < 4; ++b) value = (value ^ ((static_cast<uint32_t>(id) >> (8 * b)) & 0xff)) * 1099511628211ull;
  }
  std::string hex() const {
    char buf[20];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(value));
    return buf;
  }
};

}  // namespace posgeom::pass
