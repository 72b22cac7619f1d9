#include "posgeom/pass/memory_estimate.h"

#include "posgeom/anova/accumulator.h"
#include "posgeom/anova/gram_sum.h"
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
  // floats (50 MB), 7 d-wide and 2 ff-wide float temporaries per token (189 MB), the
  // accumulator's float32 product of a hidden state with the previous one (13 MB) and a
  // second-moment block's float32 d x d product; the magnitudes' float32 |h| (13 MB) and
  // their bins as int32 and int64 (38 MB).
  EXPECT_EQ(e.activations, 2LL * 8 * 12 * 128 * 512 * 4 + 4096LL * (7 * 768 + 2 * 3072) * 4 + 4096LL * 768 * 4 + 4LL * 768 * 768 +
                               4096LL * 768 * 4 + 12LL * 4096 * 768);
  // Per layer in float64: position sums (511 x d), two d x d moments, 4096 context means
  // and 4 reservoir sequences, and the float32 d x d of the second moment; then the host's
  // float64 copy of all but that float32 d x d while a state is saved: on the CPU one memory.
  // The magnitudes over all 512 positions: the largest |h| (512 x d), where each dimension's
  // was (3 x d), 4096 histogram bins, the skipped position's sums (1 x d), 512 squares and 2
  // sums.
  const int64_t accumulated = 8LL * (511 * 768 + 2 * 768 * 768 + 4096 * 768 + 4 * 511 * 768) + 4LL * 768 * 768 +
                              8LL * (512 * 768 + 3 * 768 + 4096 + 768 + 512 + 2);
  EXPECT_EQ(e.statistics, 13 * (2 * accumulated - 4LL * 768 * 768));
  EXPECT_EQ(e.host, 0);
  EXPECT_EQ(e.total(), e.runtime + e.weights + e.activations + e.statistics);
  // The cosines between layers: a batch's float32 unit vectors of all 13 layers (511
  // positions after the skip) and a product.
  s.layer_cosines = true;
  EXPECT_EQ(pass::estimatePassMemory(gpt2Small(), 124'000'000, s).activations - e.activations, 4LL * 8 * 511 * 768 * 14);
  s.layer_cosines = false;
  // On a GPU the copy is the host's, not the device's.
  s.device_memory = true;
  const auto gpu = pass::estimatePassMemory(gpt2Small(), 124'000'000, s);
  EXPECT_EQ(gpu.statistics, 13 * accumulated);
  EXPECT_EQ(gpu.host, 13 * (accumulated - 4LL * 768 * 768));
  s.device_memory = false;
  // Fewer windows than the caps: the samples are allocated for them only.
  s.windows = 100;
  EXPECT_EQ(pass::estimatePassMemory(gpt2Small(), 124'000'000, s).statistics, e.statistics - 13 * 2 * 8LL * (4096 - 100) * 768);
  s.windows = 0;
  s.second_moment = false;
  EXPECT_EQ(pass::estimatePassMemory(gpt2Small(), 124'000'000, s).statistics, e.statistics - 13 * 20LL * 768 * 768);
  s.heads = true;
  EXPECT_GT(pass::estimatePassMemory(gpt2Small(), 124'000'000, s).statistics, e.statistics - 13 * 20LL * 768 * 768);
}

// Layer-major in one wave, each layer is handed to its file once final: two layers'
// statistics at a time (one summed, one written), however many are analysed.
TEST(MemoryEstimate, AStreamedRunHoldsTwoLayersStatistics) {
  pass::PassShape s;
  s.batch = 8;
  s.seq_len = 512;
  s.layers_kept = 13;
  s.layer_major = true;
  const auto held = pass::estimatePassMemory(gpt2Small(), 124'000'000, s);
  s.streamed = true;
  const auto streamed = pass::estimatePassMemory(gpt2Small(), 124'000'000, s);
  EXPECT_EQ(streamed.statistics * 13, held.statistics * 2);
  EXPECT_EQ(streamed.total() - streamed.statistics, held.total() - held.statistics);
  // On a GPU the device holds one layer's sums either way; the host two parked, not 13.
  s.device_memory = true;
  const auto gpu = pass::estimatePassMemory(gpt2Small(), 124'000'000, s);
  s.streamed = false;
  const auto gpu_held = pass::estimatePassMemory(gpt2Small(), 124'000'000, s);
  EXPECT_EQ(gpu.statistics, gpu_held.statistics);
  EXPECT_EQ(gpu.host * 13, gpu_held.host * 2);
  // One layer analysed: one held.
  s.device_memory = false;
  s.streamed = true;
  s.layers_kept = 1;
  EXPECT_EQ(pass::estimatePassMemory(gpt2Small(), 124'000'000, s).statistics * 13, held.statistics);
}

// The estimate of the statistics is what the accumulators allocate: a GPU shape's device
// part (the float32 d x d of the second moment is ssyrk's scratch here, a GPU's blocks'
// float32 sum there: the same bytes) against an Accumulator's tensors, with and without
// the heads' inputs, and with fewer windows than the caps.
TEST(MemoryEstimate, TheStatisticsAreWhatTheAccumulatorsAllocate) {
  model::ModelConfig c = gpt2Small();
  c.hidden_size = 64;
  for (const bool heads : {false, true})
    for (const int64_t windows : {int64_t{0}, int64_t{3}}) {
      pass::PassShape s;
      s.seq_len = 32;
      s.layers_kept = 3;
      s.heads = heads;
      s.windows = windows;
      s.device_memory = true;
      anova::AccumulatorOptions o;
      o.layers = {1, 2, 3};
      o.attention_inputs = heads;
      o.windows_expected = windows;
      const anova::Accumulator acc(o, s.seq_len, c.hidden_size, at::kCPU);
      const auto e = pass::estimatePassMemory(c, 1000, s);
      const int64_t samples = heads ? 3 * 4 * anova::sampleRows(8, windows) * 32 * 64 : 0;  // float32, on the host
      const int64_t scalars = 3 * 2 * 8;  // each layer's norm and cosine sums: below the estimate's grain
      const int64_t scratch = anova::GramSum(64, at::kCPU).symmetricUpdate() ? 0 : 3 * 4 * 64 * 64;
      EXPECT_EQ(acc.bytes(), e.statistics + samples + scalars - scratch) << "heads " << heads << ", windows " << windows;
      // Layer-major on a GPU: one layer's sums on the device at a time, every layer's float64
      // sums parked on the host (the float32 d x d is dropped there).
      s.layer_major = true;
      const auto parked = pass::estimatePassMemory(c, 1000, s);
      EXPECT_EQ(parked.statistics * 3, e.statistics);
      const int64_t float64_sums = acc.bytes() - samples - scalars - (scratch ? 0 : 3 * 4 * 64 * 64);
      EXPECT_EQ(parked.host - e.host, float64_sums) << "heads " << heads << ", windows " << windows;
    }
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
