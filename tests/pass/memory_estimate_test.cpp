#include "posgeom/pass/memory_estimate.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

model::ModelConfig gpt2Small() {
  model::ModelConfig c;
  c.hidden_size = 768;
  c.num_heads = 12;
  c.num_layers = 12;
  c.intermediate_size = 3072;
  c.vocab_size = 50257;
  return c;
}

TEST(MemoryEstimate, CountsTheLargestPartsByHand) {
  pass::PassShape s;
  s.batch = 8;
  s.seq_len = 512;
  s.layers_kept = 13;
  const auto e = pass::estimatePassMemory(gpt2Small(), 124'000'000, s);
  EXPECT_EQ(e.weights, 496'000'000);
  // One block for 4096 tokens: scores and probabilities of 128 queries, 2 x 8 x 12 x 128 x 512
  // floats (50 MB), 7 d-wide and 2 ff-wide float temporaries per token (189 MB), and the
  // accumulator's float32 product of a hidden state with the previous one (13 MB).
  EXPECT_EQ(e.activations, 2LL * 8 * 12 * 128 * 512 * 4 + 4096LL * (7 * 768 + 2 * 3072) * 4 + 4096LL * 768 * 4);
  // Per layer in float64: position sums (511 x d), two d x d moments, 4096 context means
  // and 4 reservoir sequences, and the float32 d x d block product; twice, for the host
  // copy while a state is saved.
  const int64_t per_layer = 8LL * (511 * 768 + 2 * 768 * 768 + 4096 * 768 + 4 * 511 * 768) + 4LL * 768 * 768;
  EXPECT_EQ(e.statistics, 2 * 13 * per_layer);
  EXPECT_EQ(e.total(), e.runtime + e.weights + e.activations + e.statistics);
  s.second_moment = false;
  EXPECT_EQ(pass::estimatePassMemory(gpt2Small(), 124'000'000, s).statistics, e.statistics - 2 * 13 * 12 * 768 * 768);
  s.heads = true;
  EXPECT_GT(pass::estimatePassMemory(gpt2Small(), 124'000'000, s).statistics, e.statistics - 2 * 13 * 12 * 768 * 768);
}

TEST(MemoryEstimate, LargestBatchIsTheLastThatFits) {
  pass::PassShape s;
  s.batch = 64;
  s.seq_len = 1024;
  s.layers_kept = 13;
  const auto config = gpt2Small();
  auto total = [&](int64_t b) {
    auto t = s;
    t.batch = b;
    return pass::estimatePassMemory(config, 124'000'000, t).total();
  };
  const int64_t limit = total(10) + 1;
  EXPECT_EQ(pass::largestBatchWithin(config, 124'000'000, s, limit), 10);
  EXPECT_EQ(pass::largestBatchWithin(config, 124'000'000, s, total(64)), 64);
  EXPECT_EQ(pass::largestBatchWithin(config, 124'000'000, s, total(1) - 1), 0);
}

TEST(MemoryEstimate, TheCpuHasSomeMemoryAvailable) {
  const auto cpu = pass::availableMemory(runtime::DeviceSpec{});
  ASSERT_TRUE(cpu.has_value());
  EXPECT_GT(*cpu, 64LL << 20);
}

}  // namespace
}  // namespace posgeom::testing
