#pragma once
// Words repeat: remembering each piece's ids makes subword encoding cheap on real text.
// Bounded (cleared when full) and safe to share between threads.
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace posgeom::tokenize {

class WordCache {
 public:
  // Appends the cached ids of `piece` to out; false when absent.
  bool lookup(std::string_view piece, std::vector<int32_t>& out) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = map_.find(std::string(piece));
    if (it == map_.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
  }
  void store(std::string_view piece, std::vector<int32_t> ids) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (map_.size() >= kLimit) map_.clear();
    map_.emplace(std::string(piece), std::move(ids));
  }

 private:
  static constexpr std::size_t kLimit = 1 << 18;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> map_;
};

// Encodes through the cache: encode(piece, ids) runs only on a miss.
template <typename Encode>
void encodeCached(const WordCache& cache, std::string_view piece, std::vector<int32_t>& out, Encode encode) {
  if (cache.lookup(piece, out)) return;
  std::vector<int32_t> ids;
  encode(piece, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  cache.store(piece, std::move(ids));
}

}  // namespace posgeom::tokenize
