#pragma once
// A family's per-block weights, held by block index: all loaded at once (resident), or each
// loaded when its block first runs, read ahead on a second thread while the block before it
// computes, and let go once a wave has run it (streamed: the layer-major pass). Torch-free:
// `Block` is the family's own struct of tensors.
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace posgeom::model {

template <typename Block>
class StreamedBlocks {
 public:
  using Load = std::function<Block(int64_t)>;

  StreamedBlocks() = default;
  StreamedBlocks(const StreamedBlocks&) = delete;  // a read-ahead thread holds `this`
  StreamedBlocks& operator=(const StreamedBlocks&) = delete;

  // Once, from the family's constructor: `count` blocks, each made by `load`; resident ones now.
  // Resident blocks do not keep `load` (nor what it holds: the checkpoint, tensors it split).
  void init(int64_t count, const Load& load, bool streamed) {
    streamed_ = streamed;
    slots_ = std::vector<Slot>(static_cast<std::size_t>(count));
    if (streamed_)
      load_ = load;
    else
      for (int64_t i = 0; i < count; ++i) slot(i).block = std::make_shared<const Block>(load(i));
  }

  int64_t size() const { return static_cast<int64_t>(slots_.size()); }

  // Block `index`, loaded now unless it is (or is being) already. The pointer keeps it for
  // its holder when the block is let go meanwhile.
  std::shared_ptr<const Block> at(int64_t index) const {
    std::unique_lock<std::mutex> lock(mutex_);
    auto& s = slot(index);
    if (s.block) return s.block;
    if (s.ahead.valid()) {
      const auto ahead = s.ahead;
      lock.unlock();
      const auto block = ahead.get();  // rethrows what the read-ahead threw (a NaN weight's InputError)
      lock.lock();
      s.ahead = {};
      return s.block = block;
    }
    lock.unlock();
    const auto block = loaded(index);
    lock.lock();
    return s.block = block;
  }

  // Block `index` for a look that should not keep it (the heads' end stage asks for every
  // block's maps in turn): the one held, else one loaded now and let go with the pointer.
  std::shared_ptr<const Block> peek(int64_t index) const {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (const auto& held_block = slot(index).block) return held_block;
    }
    return loaded(index);  // streamed: resident blocks are always held
  }

  // Streamed: block `index` read on a second thread (no-op past the last block, when held or
  // resident).
  void readAhead(int64_t index) const {
    if (!streamed_ || index < 0 || index >= size()) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    auto& s = slot(index);
    if (s.block || s.ahead.valid()) return;
    s.ahead = std::async(std::launch::async, [this, index] { return loaded(index); }).share();
  }

  // Streamed: block `index` let go (resident blocks stay).
  void release(int64_t index) const {
    if (!streamed_) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    slot(index).block.reset();
  }

  // How many blocks are held now (a test's check that streaming holds one or two).
  int64_t held() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    int64_t n = 0;
    for (const auto& s : slots_) n += s.block || s.ahead.valid() ? 1 : 0;
    return n;
  }

 private:
  struct Slot {
    std::shared_ptr<const Block> block;
    std::shared_future<std::shared_ptr<const Block>> ahead;  // a read-ahead under way
  };

  std::shared_ptr<const Block> loaded(int64_t index) const { return std::make_shared<const Block>(load_(index)); }
  Slot& slot(int64_t index) const {
    if (index < 0 || index >= size()) throw std::out_of_range("block " + std::to_string(index));
    return slots_[static_cast<std::size_t>(index)];
  }

  Load load_;
  bool streamed_ = false;
  mutable std::mutex mutex_;
  mutable std::vector<Slot> slots_;  // last: a read-ahead still running is waited for before load_ goes
};

}  // namespace posgeom::model
