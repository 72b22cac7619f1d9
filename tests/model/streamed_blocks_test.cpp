#include "posgeom/model/streamed_blocks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

namespace posgeom::testing {
namespace {

// A block that says which load made it and on which thread.
struct Made {
  int64_t index = 0;
  int load = 0;
  std::thread::id thread;
};

struct Loads {
  std::atomic<int> count{0};
  model::StreamedBlocks<Made>::Load load() {
    return [this](int64_t i) {
      if (i == 3) throw std::runtime_error("block 3 is damaged");
      return Made{i, ++count, std::this_thread::get_id()};
    };
  }
};

TEST(StreamedBlocks, ResidentBlocksAreLoadedOnceAtTheStartAndKept) {
  Loads loads;
  model::StreamedBlocks<Made> blocks;
  blocks.init(3, [&](int64_t i) { return Made{i, ++loads.count, std::this_thread::get_id()}; }, false);
  EXPECT_EQ(loads.count, 3);
  EXPECT_EQ(blocks.held(), 3);
  blocks.release(1);
  blocks.readAhead(2);
  EXPECT_EQ(blocks.at(1)->index, 1);
  EXPECT_EQ(blocks.at(1)->load, 2);
  EXPECT_EQ(loads.count, 3);
  EXPECT_THROW(blocks.at(3), std::out_of_range);
}

// Streamed: nothing at the start; a block loaded on first use or read ahead on another
// thread (then not loaded again), let go on release, loaded anew after; a read-ahead's
// failure reaches the one who asks for the block.
TEST(StreamedBlocks, StreamedBlocksAreReadWhenAskedAndLetGo) {
  Loads loads;
  model::StreamedBlocks<Made> blocks;
  blocks.init(5, loads.load(), true);
  EXPECT_EQ(loads.count, 0);
  EXPECT_EQ(blocks.held(), 0);
  const auto first = blocks.at(0);
  EXPECT_EQ(first->thread, std::this_thread::get_id());
  blocks.readAhead(1);
  EXPECT_EQ(blocks.held(), 2);
  const auto ahead = blocks.at(1);
  EXPECT_NE(ahead->thread, std::this_thread::get_id());
  EXPECT_EQ(blocks.at(1)->load, ahead->load);  // held: not loaded again
  EXPECT_EQ(loads.count, 2);
  blocks.release(0);
  EXPECT_EQ(blocks.held(), 1);
  EXPECT_EQ(first->index, 0);  // the holder keeps what it holds
  EXPECT_EQ(blocks.at(0)->load, 3);  // read anew
  blocks.readAhead(3);
  try {
    blocks.at(3);
    FAIL() << "the read-ahead's failure must reach at()";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "block 3 is damaged");
  }
  blocks.readAhead(5);  // past the last block: nothing
  EXPECT_EQ(loads.count, 3);
}

// A look at a block (the heads' end stage, after the pass) takes the one held, else loads
// one that goes with its pointer: looking at every block in turn holds none of them.
TEST(StreamedBlocks, APeekKeepsNothing) {
  Loads loads;
  model::StreamedBlocks<Made> blocks;
  blocks.init(3, loads.load(), true);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(blocks.peek(i)->index, i);
  EXPECT_EQ(blocks.held(), 0);
  EXPECT_EQ(loads.count, 3);
  const auto held = blocks.at(2);
  EXPECT_EQ(blocks.peek(2)->load, held->load);  // the held one, not read again
  EXPECT_EQ(loads.count, 4);
}

}  // namespace
}  // namespace posgeom::testing
