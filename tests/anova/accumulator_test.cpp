#include "posgeom/anova/accumulator.h"

#include <limits>
#include <numeric>

#include "posgeom/base/error.h"
#include "posgeom/runtime/device.h"
#include "posgeom/runtime/torch_device.h"

#include "anova_fixtures.h"
#include "test_devices.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

at::Tensor tensorOf(const Sequences& h) {
  auto t = at::empty({static_cast<int64_t>(h.size()), h[0].rows(), h[0].cols()}, at::kDouble);
  for (std::size_t c = 0; c < h.size(); ++c)
    for (Eigen::Index i = 0; i < h[c].rows(); ++i)
      for (Eigen::Index j = 0; j < h[c].cols(); ++j) t[static_cast<int64_t>(c)][i][j] = h[c](i, j);
  return t;
}

Sequences sequencesOf(const at::Tensor& t) {
  const auto host = t.to(at::kCPU, at::kDouble).contiguous();
  Sequences out;
  for (int64_t c = 0; c < host.size(0); ++c) {
    Eigen::MatrixXd m(host.size(1), host.size(2));
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) m(i, j) = host[c][i][j].item<double>();
    out.push_back(m);
  }
  return out;
}

// Layer 1 of h [N, T, d] after `previous` as layer 0, in batches; with `normed`, also the
// attention inputs of block 0 (which the state keeps beside layer 1).
anova::LayerStatistics accumulateLayer(const at::Tensor& h, const at::Tensor& previous, const std::vector<int64_t>& windows,
                                       int64_t batch, const at::Device& device = at::kCPU,
                                       const at::Tensor& normed = at::Tensor(), int64_t attention_samples = 0) {
  anova::AccumulatorOptions o;
  o.layers = {1};
  o.skip_first = 1;
  o.attention_inputs = normed.defined();
  o.caps.attention_samples = attention_samples;
  anova::Accumulator acc(o, h.size(1), h.size(2), device);
  for (int64_t start = 0; start < h.size(0); start += batch) {
    const int64_t b = std::min(batch, h.size(0) - start);
    std::vector<int64_t> w(windows.begin() + start, windows.begin() + start + b);
    std::vector<std::string> labels;
    for (auto i : w) labels.push_back(i % 2 ? "odd" : "even");
    acc.beginBatch(w, labels);
    acc.onHidden(0, previous.narrow(0, start, b).to(device));
    if (normed.defined()) acc.onAttentionInput(0, normed.narrow(0, start, b).to(device));
    acc.onHidden(1, h.narrow(0, start, b).to(device));
  }
  return acc.statistics().at(0);
}

// The accumulators on each test device (test_devices.h), against the definitions.
class AccumulatorOnDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_NO_THROW(runtime::requireDevice(spec(), "test device " + GetParam())); }
  runtime::DeviceSpec spec() const { return runtime::parseDevice(GetParam()); }
  at::Device device() const { return runtime::torchDevice(spec()); }
};
INSTANTIATE_TEST_SUITE_P(Devices, AccumulatorOnDevice, ::testing::ValuesIn(testDevices()), deviceCaseName);

double relativeError(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {
  return (got - want).cwiseAbs().maxCoeff() / std::max(want.cwiseAbs().maxCoeff(), 1e-300);
}

TEST(Accumulator, NonFiniteActivationsNameTheirFirstHiddenState) {
  anova::AccumulatorOptions o;
  o.layers = {0};  // the check covers every hidden state, tracked or not
  anova::Accumulator acc(o, 5, 3, at::kCPU);
  auto h = at::ones({2, 5, 3}, at::kFloat);
  acc.beginBatch({4, 5}, {"", ""});
  acc.onHidden(0, h);
  acc.onHidden(1, h);
  acc.checkFinite();  // all finite so far
  auto bad = h.clone();
  bad[1][2][0] = std::numeric_limits<float>::quiet_NaN();
  acc.onHidden(2, bad);
  acc.onHidden(3, bad);
  try {
    acc.checkFinite();
    FAIL() << "NaN must be reported";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("hidden.2: NaN or Inf in the activations (first at this hidden state, in the batch from window 4)", 0), 0u)
        << e.what();
  }
  acc.beginBatch({6}, {""});  // a new batch starts clean
  acc.onHidden(0, h.narrow(0, 0, 1));
  acc.checkFinite();
  // x86's NaN of inf - inf has its sign bit set, and LibTorch 1.13's vectorised bfloat16 abs
  // keeps it: the magnitudes' bins take it, and the batch's check names it as any NaN.
  anova::Accumulator wide(o, 64, 64, at::kCPU);
  auto inf = at::full({2, 64, 64}, std::numeric_limits<float>::infinity(), at::kFloat);
  const auto nan = (inf - inf).to(at::kBFloat16);
  wide.beginBatch({0, 1}, {"", ""});
  EXPECT_NO_THROW(wide.onHidden(0, nan));
  EXPECT_THROW(wide.checkFinite(), InputError);
}

// float32 activations, as a pass gives them, against the float64 statistics of the same
// (float32-rounded) values. A batch is reduced in float32 on every device (pairwise, so
// about 1e-7 relative; float64 takes ATen's 3-9x slower mixed path on the CPU and a float64
// copy of the activations on CUDA) and added into float64; the second moment's block
// products are float32 (1e-6).
TEST_P(AccumulatorOnDevice, Float32ActivationsReduceToTheFloat64Definition) {
  const auto h = tensorOf(randomSequences(10, 7, 4, 6)).to(at::kFloat);
  const auto normed = at::randn({10, 7, 4}, at::kFloat);
  std::vector<int64_t> windows(10);
  std::iota(windows.begin(), windows.end(), 0);
  const auto s = accumulateLayer(h, at::ones_like(h), windows, 3, device(), normed, 4);
  const auto direct = directStatistics(sequencesOf(h), 1, 1);
  const double tolerance = 1e-6;
  EXPECT_EQ(s.sequences, 10);
  EXPECT_LT(relativeError(s.position_sum, direct.position_sum), tolerance);
  EXPECT_LT(relativeError(s.second_moment, direct.second_moment), 1e-6);
  EXPECT_LT(relativeError(s.context_second_moment, direct.context_second_moment), tolerance);
  EXPECT_LT(relativeError(s.context_means, direct.context_means), tolerance);
  EXPECT_NEAR(s.norm_sum, direct.norm_sum, tolerance * direct.norm_sum);
  EXPECT_EQ(s.context_labels, direct.context_labels);
  EXPECT_EQ(s.reservoir.rows(), 4 * 6);  // 4 whole sequences of 6 positions
  EXPECT_GT(s.previous_cosine_sum, 0);
  // The heads' inputs: their sum over windows, and the first 4 windows as they came.
  Eigen::MatrixXd normed_sum = Eigen::MatrixXd::Zero(7, 4);
  for (const auto& seq : sequencesOf(normed)) normed_sum += seq;
  EXPECT_LT(relativeError(s.attention_input_sum, normed_sum), tolerance);
  const auto kept = sequencesOf(normed.narrow(0, 0, 4));
  ASSERT_EQ(s.attention_samples.rows(), 4 * 7);
  for (int c = 0; c < 4; ++c) EXPECT_EQ(s.attention_samples.middleRows(c * 7, 7), kept[static_cast<size_t>(c)]) << c;
}

// Issue 36: a massive activation planted at window 7, position 0 (which the ANOVA skips),
// dimension 2, is found with its window, position and token id; every magnitude statistic
// equals its definition over every position, in batches as a pass gives them.
TEST_P(AccumulatorOnDevice, APlantedMassiveActivationIsFoundWhereItIs) {
  auto h = tensorOf(randomSequences(10, 7, 4, 21)).to(at::kFloat);
  h[7][0][2] = -640.0F;
  h[4][3][1] = 90.0F;
  const auto ids = at::arange(70, at::kLong).reshape({10, 7}) + 1000;
  std::vector<int64_t> windows(10);
  std::iota(windows.begin(), windows.end(), 20);
  anova::AccumulatorOptions o;
  o.layers = {0};
  o.skip_first = 2;
  anova::Accumulator acc(o, 7, 4, device());
  for (int64_t start = 0; start < 10; start += 3) {
    const int64_t b = std::min<int64_t>(3, 10 - start);
    acc.beginBatch({windows.begin() + start, windows.begin() + start + b}, std::vector<std::string>(static_cast<std::size_t>(b)),
                   ids.narrow(0, start, b));
    acc.onHidden(0, h.narrow(0, start, b).to(device()));
  }
  const auto got = acc.statistics().at(0).magnitudes;
  std::vector<std::vector<int64_t>> id_rows;
  for (int64_t c = 0; c < 10; ++c) {
    id_rows.emplace_back();
    for (int64_t p = 0; p < 7; ++p) id_rows.back().push_back(ids[c][p].item<int64_t>());
  }
  const auto want = directMagnitudes(sequencesOf(h), 2, windows, id_rows);
  EXPECT_EQ(got.max_window[2], 27);
  EXPECT_EQ(got.max_position[2], 0);
  EXPECT_EQ(got.max_token[2], 1049);
  EXPECT_EQ(got.absMax()[2], 640);
  EXPECT_EQ(got.max_window[1], 24);
  EXPECT_EQ(got.max_position[1], 3);
  EXPECT_EQ(got.position_abs_max, want.position_abs_max);  // float32 magnitudes: exact
  EXPECT_EQ(got.max_window, want.max_window);
  EXPECT_EQ(got.max_position, want.max_position);
  EXPECT_EQ(got.max_token, want.max_token);
  EXPECT_EQ(got.counts, want.counts);
  EXPECT_LT(relativeError(got.skipped_position_sum, want.skipped_position_sum), 1e-6);
  EXPECT_LT(relativeError(got.position_square_sum, want.position_square_sum), 1e-6);
  EXPECT_NEAR(got.context_square_sum, want.context_square_sum, 1e-6 * want.context_square_sum);
  EXPECT_NEAR(got.context_square_sum_from_1, want.context_square_sum_from_1, 1e-6 * want.context_square_sum_from_1);
}

// Windows whose first token is the same (a BOS token) have equal maxima there: the lowest
// window is named, on every device, as merge() names it.
TEST_P(AccumulatorOnDevice, EqualMaximaNameTheLowestWindow) {
  auto h = at::randn({6, 4, 3}, at::kFloat);
  h.select(1, 0).fill_(9.0F);
  anova::AccumulatorOptions o;
  o.layers = {0};
  anova::Accumulator acc(o, 4, 3, device());
  acc.beginBatch({10, 11, 12}, {"", "", ""});
  acc.onHidden(0, h.narrow(0, 0, 3).to(device()));
  acc.beginBatch({13, 14, 15}, {"", "", ""});
  acc.onHidden(0, h.narrow(0, 3, 3).to(device()));
  const auto m = acc.statistics().at(0).magnitudes;
  EXPECT_EQ(m.max_window, (std::vector<int64_t>{10, 10, 10}));
  EXPECT_EQ(m.max_position, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(m.max_token, (std::vector<int64_t>{-1, -1, -1}));  // no ids given
}

// The GPU's way of counting bins (histc over the bin numbers) gives the CPU's (bincount),
// and both a count of each bin from its definition, the first and last bins included.
TEST(Accumulator, BothWaysOfCountingBinsGiveTheSameCounts) {
  auto bins = at::randint(0, anova::kMagnitudeBins, {100000}, at::kInt);
  bins[0] = 0;
  bins[1] = anova::kMagnitudeBins - 1;
  bins.narrow(0, 2, 5000).fill_(2032);  // most |h| in a few bins
  std::vector<double> want(static_cast<std::size_t>(anova::kMagnitudeBins), 0.0);
  const auto host = bins.contiguous();
  for (int64_t i = 0; i < host.numel(); ++i) want[static_cast<std::size_t>(host.data_ptr<int32_t>()[i])] += 1;
  for (const auto how : {anova::BinCounting::kBincount, anova::BinCounting::kHistc}) {
    auto counts = at::zeros({anova::kMagnitudeBins}, at::kDouble);
    anova::countMagnitudeBins(counts, bins, how);
    anova::countMagnitudeBins(counts, bins.narrow(0, 0, 10), how);  // they add
    auto expected = want;
    for (int64_t i = 0; i < 10; ++i) expected[static_cast<std::size_t>(host.data_ptr<int32_t>()[i])] += 1;
    EXPECT_EQ(std::vector<double>(counts.data_ptr<double>(), counts.data_ptr<double>() + counts.numel()), expected)
        << (how == anova::BinCounting::kHistc ? "histc" : "bincount");
  }
}

TEST(Accumulator, ShardsMergedEqualOneRunTo1e12) {
  const auto t = tensorOf(randomSequences(12, 9, 5, 7));
  const auto prev = at::randn_like(t);
  std::vector<int64_t> all(12);
  std::iota(all.begin(), all.end(), 0);
  const auto whole = accumulateLayer(t, prev, all, 4);
  std::vector<int64_t> even{0, 2, 4, 6, 8, 10}, odd{1, 3, 5, 7, 9, 11};
  const auto idx = [](const std::vector<int64_t>& v) { return at::tensor(v, at::kLong); };
  auto merged = accumulateLayer(t.index_select(0, idx(even)), prev.index_select(0, idx(even)), even, 4);
  anova::merge(merged, accumulateLayer(t.index_select(0, idx(odd)), prev.index_select(0, idx(odd)), odd, 4), {});
  auto rel = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) { return (a - b).norm() / b.norm(); };
  EXPECT_LT(rel(merged.position_sum, whole.position_sum), 1e-12);
  EXPECT_LT(rel(merged.second_moment, whole.second_moment), 1e-12);
  EXPECT_LT(rel(merged.context_second_moment, whole.context_second_moment), 1e-12);
  EXPECT_LT(rel(merged.context_means, whole.context_means), 1e-12);
  EXPECT_LT(rel(merged.reservoir, whole.reservoir), 1e-12);
  EXPECT_NEAR(merged.previous_cosine_sum, whole.previous_cosine_sum, 1e-12 * std::abs(whole.previous_cosine_sum));
  EXPECT_EQ(merged.magnitudes.position_abs_max, whole.magnitudes.position_abs_max);
  EXPECT_EQ(merged.magnitudes.max_window, whole.magnitudes.max_window);
  EXPECT_EQ(merged.magnitudes.max_position, whole.magnitudes.max_position);
  EXPECT_EQ(merged.magnitudes.counts, whole.magnitudes.counts);
  EXPECT_LT(rel(merged.magnitudes.position_square_sum, whole.magnitudes.position_square_sum), 1e-12);
}

// What `analyze --resume` relies on: statistics() then restore() into a fresh accumulator
// continues to exactly (bit for bit) the sums of one accumulator over all batches.
TEST_P(AccumulatorOnDevice, RestoredStatisticsContinueBitForBit) {
  const auto t = at::randn({10, 6, 4}, at::kDouble).to(at::kFloat);
  const auto normed = at::randn({10, 6, 4}, at::kFloat);
  anova::AccumulatorOptions o;
  o.layers = {0, 1};
  o.attention_inputs = true;
  o.caps.reservoir = 3;
  o.caps.attention_samples = 5;
  o.caps.contexts = 7;
  auto feed = [&](anova::Accumulator& acc, int64_t from, int64_t to) {
    for (int64_t start = from; start < to; start += 2) {
      acc.beginBatch({start, start + 1}, {"a", "b"});
      acc.onHidden(0, t.narrow(0, start, 2).to(device()) * 0.5);
      acc.onAttentionInput(0, normed.narrow(0, start, 2).to(device()));
      acc.onHidden(1, t.narrow(0, start, 2).to(device()));
    }
  };
  anova::Accumulator whole(o, 6, 4, device());
  feed(whole, 0, 10);
  anova::Accumulator first(o, 6, 4, device());
  feed(first, 0, 4);
  anova::Accumulator second(o, 6, 4, device());
  second.restore(first.statistics(), "state");
  feed(second, 4, 10);
  const auto a = whole.statistics(), b = second.statistics();
  ASSERT_EQ(a.size(), 2u);
  expectSameStatistics(a, b);
  EXPECT_EQ(a[1].attention_sample_windows, (std::vector<int64_t>{0, 1, 2, 3, 4}));

  anova::AccumulatorOptions other = o;
  other.layers = {1};
  anova::Accumulator wrong(other, 6, 4, device());
  EXPECT_THROW(wrong.restore(first.statistics(), "state"), InputError);
  anova::Accumulator narrower(o, 5, 4, device());
  EXPECT_THROW(narrower.restore(first.statistics(), "state"), InputError);
}

// A layer-major pass observes every batch of a wave at layer l before any at layer l + 1,
// taking each batch's state out and putting it back: the same numbers as batch by batch,
// the cosine between layers included (it needs the batch's previous hidden state).
TEST_P(AccumulatorOnDevice, BatchesObservedLayerMajorGiveTheSameStatistics) {
  const auto t = at::randn({9, 6, 4}, at::kFloat);
  const auto normed = at::randn({9, 6, 4}, at::kFloat);
  anova::AccumulatorOptions o;
  o.layers = {0, 1, 2};
  o.attention_inputs = true;
  o.caps.reservoir = 4;
  o.caps.attention_samples = 5;
  o.caps.contexts = 7;
  auto hidden = [&](int64_t layer, int64_t start) { return (t.narrow(0, start, 3) * (1.0 + layer) + layer).to(device()); };
  auto feed = [&](anova::Accumulator& acc, int64_t layer, int64_t start) {
    acc.onHidden(layer, hidden(layer, start));
    if (layer < 2) acc.onAttentionInput(layer, normed.narrow(0, start, 3).to(device()) * (layer + 1));
  };
  auto labels = [](int64_t start) { return std::vector<std::string>{std::to_string(start), "x", "y"}; };
  anova::Accumulator batch_major(o, 6, 4, device());
  for (int64_t start = 0; start < 9; start += 3) {
    batch_major.beginBatch({start, start + 1, start + 2}, labels(start));
    for (int64_t layer = 0; layer < 3; ++layer) feed(batch_major, layer, start);
  }
  // Two waves (batches 0 and 1, then 2), each layer parked once its block is done for the
  // wave: on a GPU its sums go to the host and come back for the next wave.
  anova::Accumulator layer_major(o, 6, 4, device());
  const int64_t all_bytes = layer_major.bytes();
  for (const auto& wave : {std::vector<int64_t>{0, 3}, std::vector<int64_t>{6}}) {
    std::vector<anova::Accumulator::BatchState> states;
    for (const int64_t start : wave) {
      layer_major.beginBatch({start, start + 1, start + 2}, labels(start));
      states.push_back(layer_major.suspendBatch());
    }
    for (int64_t layer = 0; layer < 3; ++layer) {
      for (std::size_t k = 0; k < states.size(); ++k) {
        layer_major.resumeBatch(std::move(states[k]));
        feed(layer_major, layer, wave[k]);
        states[k] = layer_major.suspendBatch();
      }
      if (device().is_cpu()) {
        EXPECT_EQ(layer_major.deviceBytes(), all_bytes);  // one memory: nothing moves
      } else {  // this layer, and the next one's attention sums: not the third
        EXPECT_GT(layer_major.deviceBytes(), 0);
        EXPECT_LT(layer_major.deviceBytes(), all_bytes);
      }
      layer_major.parkThrough(layer);
    }
    EXPECT_EQ(layer_major.deviceBytes(), device().is_cpu() ? all_bytes : 0);
  }
  const auto a = batch_major.statistics(), b = layer_major.statistics();
  ASSERT_EQ(a.size(), 3u);
  EXPECT_GT(b[2].previous_cosine_sum, 0);
  expectSameStatistics(a, b);
}

TEST(Accumulator, TakingTheStatisticsGivesWhatCopyingThemGives) {
  anova::AccumulatorOptions o;
  o.layers = {0, 1};
  anova::Accumulator acc(o, 6, 4, at::kCPU);
  const auto h = at::randn({3, 6, 4});
  acc.beginBatch({0, 1, 2}, {"a", "b", "c"});
  acc.onHidden(0, h);
  acc.onHidden(1, h * 2);
  const auto copied = acc.statistics();
  const auto taken = acc.takeStatistics();
  ASSERT_EQ(taken.size(), 2u);
  for (std::size_t i = 0; i < taken.size(); ++i) {
    EXPECT_EQ(taken[i].layer, copied[i].layer);
    EXPECT_TRUE(taken[i].second_moment.isApprox(copied[i].second_moment));
    EXPECT_TRUE(taken[i].position_sum.isApprox(copied[i].position_sum));
    EXPECT_EQ(taken[i].context_windows, copied[i].context_windows);
  }
  EXPECT_TRUE(acc.statistics().empty());
}

// Layer-major, one wave: a layer's sums are allocated when a batch first reaches it and
// released when taken, so the accumulator holds only the layers between; each taken layer,
// and those left, are what an accumulator that held them all from the start gives.
TEST(Accumulator, LayersAllocatedOnFirstUseAndTakenOnceFinalHoldOnlyThoseBetween) {
  anova::AccumulatorOptions o;
  o.layers = {0, 1, 2};
  o.attention_inputs = true;
  const auto h = at::randn({3, 6, 4});
  auto feed = [&](anova::Accumulator& acc, int64_t layer) {
    if (layer > 0) acc.onAttentionInput(layer - 1, h * (layer + 3));
    acc.onHidden(layer, h * (layer + 1) + layer);
  };
  anova::Accumulator eager(o, 6, 4, at::kCPU);
  eager.beginBatch({0, 1, 2}, {"a", "b", "c"});
  for (int64_t layer = 0; layer < 3; ++layer) feed(eager, layer);
  const auto all = eager.statistics();
  const int64_t all_bytes = eager.bytes();

  o.allocate_on_first_use = true;
  anova::Accumulator lazy(o, 6, 4, at::kCPU);
  EXPECT_EQ(lazy.bytes(), 0);
  const auto untouched = lazy.statistics();  // zeros where no batch came yet
  ASSERT_EQ(untouched.size(), 3u);
  EXPECT_EQ(untouched[2].position_sum, Eigen::MatrixXd::Zero(5, 4));
  lazy.beginBatch({0, 1, 2}, {"a", "b", "c"});
  feed(lazy, 0);
  const int64_t one_layer = lazy.bytes();  // layer 0: no attention inputs
  EXPECT_GT(one_layer, 0);
  EXPECT_LT(one_layer, all_bytes / 2);
  feed(lazy, 1);
  const auto first = lazy.takeLayer(0);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(lazy.takeLayer(0).has_value());  // once
  EXPECT_FALSE(lazy.takeLayer(7).has_value());  // not accumulated
  feed(lazy, 2);
  const auto second = lazy.takeLayer(1);
  ASSERT_TRUE(second.has_value());
  EXPECT_LT(lazy.bytes(), all_bytes / 2);  // layer 2's alone
  const auto rest = lazy.statistics();     // the layers not taken
  ASSERT_EQ(rest.size(), 1u);
  expectSameStatistics(all, {*first, *second, rest[0]});
  EXPECT_THROW(feed(lazy, 0), std::logic_error);  // a taken layer reached again
}

// Across several of GramSum's row blocks, with a mean far from zero (where cancellation
// would show): float32 block products, float64 sums of them, on every device.
TEST_P(AccumulatorOnDevice, SecondMomentOfFloat32ActivationsKeepsItsPrecision) {
  anova::AccumulatorOptions o;
  o.layers = {0};
  anova::Accumulator acc(o, 513, 32, device());
  const auto h = at::randn({2, 513, 32}) + 3.0;
  acc.beginBatch({0, 1}, {"", ""});
  acc.onHidden(0, h.to(device()));
  const auto x = h.narrow(1, 1, 512).reshape({-1, 32}).to(at::kDouble);
  const auto exact = anova::toEigen(at::mm(x.t(), x));
  EXPECT_LT(relativeError(acc.statistics().at(0).second_moment, exact), 1e-6);
}

// The paper's Appendix B.2 check: with layer_cosines, every accumulated hidden state's
// cosine with every earlier accumulated one, token by token after the skip, summed over
// windows in batches; a hidden state not accumulated (1) has no row or column, and a state
// restored continues bit for bit. Off by default.
TEST_P(AccumulatorOnDevice, CosinesBetweenEveryPairOfLayersAreTheDefinition) {
  const int64_t n = 7, t = 5, d = 6;
  std::vector<at::Tensor> hidden{at::randn({n, t, d}, at::kFloat)};
  for (int l = 1; l < 4; ++l) hidden.push_back(hidden.back() + 0.7 * at::randn({n, t, d}, at::kFloat));
  anova::AccumulatorOptions o;
  o.layers = {0, 2, 3};
  o.layer_cosines = true;
  auto feed = [&](anova::Accumulator& acc, int64_t from, int64_t to) {
    for (int64_t start = from; start < to; start += 3) {
      const int64_t b = std::min<int64_t>(3, to - start);
      std::vector<int64_t> windows(static_cast<std::size_t>(b));
      std::iota(windows.begin(), windows.end(), start);
      acc.beginBatch(windows, std::vector<std::string>(static_cast<std::size_t>(b)));
      for (int l = 0; l < 4; ++l) acc.onHidden(l, hidden[static_cast<std::size_t>(l)].narrow(0, start, b).to(device()));
    }
  };
  anova::Accumulator whole(o, t, d, device());
  feed(whole, 0, n);
  const auto stats = whole.statistics();
  auto cosineSum = [&](int a, int b) {
    const auto x = hidden[static_cast<std::size_t>(a)].narrow(1, 1, t - 1).to(at::kDouble);
    const auto y = hidden[static_cast<std::size_t>(b)].narrow(1, 1, t - 1).to(at::kDouble);
    return (at::sum(x * y, {2}) / (x.norm(2, {2}) * y.norm(2, {2}))).sum().item<double>();
  };
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_TRUE(stats[0].layer_cosines);
  EXPECT_EQ(stats[0].earlier_cosine_sums.size(), 0);
  ASSERT_EQ(stats[1].earlier_cosine_sums.size(), 2);
  EXPECT_NEAR(stats[1].earlier_cosine_sums[0], cosineSum(2, 0), 1e-6 * n * (t - 1));
  EXPECT_EQ(stats[1].earlier_cosine_sums[1], 0.0);  // hidden.1 not accumulated
  ASSERT_EQ(stats[2].earlier_cosine_sums.size(), 3);
  EXPECT_NEAR(stats[2].earlier_cosine_sums[0], cosineSum(3, 0), 1e-6 * n * (t - 1));
  EXPECT_NEAR(stats[2].earlier_cosine_sums[2], cosineSum(3, 2), 1e-6 * n * (t - 1));
  EXPECT_GT(stats[2].earlier_cosine_sums[2], stats[2].earlier_cosine_sums[0]);  // the nearer layer is more alike

  anova::Accumulator first(o, t, d, device()), second(o, t, d, device());
  feed(first, 0, 3);
  second.restore(first.statistics(), "state");
  feed(second, 3, n);
  expectSameStatistics(stats, second.statistics());

  anova::AccumulatorOptions without = o;
  without.layer_cosines = false;
  anova::Accumulator plain(without, t, d, device());
  feed(plain, 0, 3);
  EXPECT_FALSE(plain.statistics()[1].layer_cosines);
  // A state without them resumed by a run that measures them, and one with them by a run
  // that does not (it went layer-major): neither has them from there on, nothing partial.
  anova::Accumulator wants(o, t, d, device()), ignores(without, t, d, device());
  wants.restore(plain.statistics(), "state");
  feed(wants, 3, n);
  for (const auto& l : wants.statistics()) EXPECT_FALSE(l.layer_cosines);
  ignores.restore(first.statistics(), "state");
  feed(ignores, 3, n);
  for (const auto& l : ignores.statistics()) EXPECT_FALSE(l.layer_cosines);
}

// A zero hidden state (an all-zero embedding row) has cosine 0 with every layer, in float32
// and bfloat16 as in float64, not NaN; two positions skipped.
TEST_P(AccumulatorOnDevice, AZeroHiddenStateHasCosineZero) {
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    auto first = at::randn({2, 6, 8}, at::kFloat);
    first[1][4].zero_();
    const auto second = first + at::randn({2, 6, 8}, at::kFloat);
    anova::AccumulatorOptions o;
    o.layers = {0, 1};
    o.skip_first = 2;
    o.layer_cosines = true;
    anova::Accumulator acc(o, 6, 8, device());
    acc.beginBatch({0, 1}, {"", ""});
    acc.onHidden(0, first.to(dtype).to(device()));
    acc.onHidden(1, second.to(dtype).to(device()));
    const auto x = first.to(dtype).to(at::kDouble).narrow(1, 2, 4), y = second.to(dtype).to(at::kDouble).narrow(1, 2, 4);
    const auto norms = x.norm(2, {2}) * y.norm(2, {2});
    const double exact = at::where(norms > 0, at::sum(x * y, {2}) / norms, at::zeros_like(norms)).sum().item<double>();
    const double got = acc.statistics().at(1).earlier_cosine_sums[0];
    EXPECT_TRUE(std::isfinite(got));
    EXPECT_NEAR(got, exact, 1e-5) << dtype;
  }
}

// bfloat16 activations (a GPU's, or a CPU's with bf16 in hardware): the cosine between
// layers multiplies in float32, as the sums reduce. A bfloat16 product keeps 8 bits, so a
// dot of 512 of them is off by ~1e-4 relative; float32 products, ~1e-7.
TEST_P(AccumulatorOnDevice, CosineOfBfloat16ActivationsMultipliesInFloat32) {
  anova::AccumulatorOptions o;
  o.layers = {1};
  o.skip_first = 0;
  anova::Accumulator acc(o, 3, 512, device());
  const auto previous = (at::rand({2, 3, 512}) + 0.5).to(at::kBFloat16);
  const auto h = (previous.to(at::kFloat) + 0.3 * at::rand({2, 3, 512})).to(at::kBFloat16);
  acc.beginBatch({0, 1}, {"", ""});
  acc.onHidden(0, previous.to(device()));
  acc.onHidden(1, h.to(device()));
  const auto a = h.to(at::kDouble), b = previous.to(at::kDouble);
  const double exact = (at::sum(a * b, {2}) / (a.norm(2, {2}) * b.norm(2, {2}))).sum().item<double>();
  EXPECT_NEAR(acc.statistics().at(0).previous_cosine_sum, exact, 1e-6 * exact);
}

}  // namespace
}  // namespace posgeom::testing
