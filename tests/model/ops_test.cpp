#include "posgeom/model/ops.h"

#include <cmath>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using model::Numerics;
namespace ops = model::ops;

TEST(Ops, AlibiSlopesForAPowerOfTwo) {
  const auto s = ops::alibiSlopes(8);
  for (int h = 0; h < 8; ++h) EXPECT_FLOAT_EQ(s[h].item<float>(), std::pow(2.0f, -(h + 1.0f)));
}

TEST(Ops, AlibiSlopesInterleaveForOtherHeadCounts) {
  // 6 heads: the 4-head geometric series 2^-2, 2^-4, ... then odd powers of 2^-1.
  const auto s = ops::alibiSlopes(6);
  const std::vector<float> expected{0.25f, 0.0625f, 0.015625f, 0.00390625f, 0.5f, 0.125f};
  ASSERT_EQ(s.numel(), 6);
  for (int h = 0; h < 6; ++h) EXPECT_FLOAT_EQ(s[h].item<float>(), expected[static_cast<size_t>(h)]);
  EXPECT_EQ(ops::alibiSlopes(12).numel(), 12);
  EXPECT_EQ(ops::alibiSlopes(1).numel(), 1);
}

TEST(Ops, AlibiBiasPenalisesDistance) {
  const auto bias = ops::alibiBias(at::tensor({0.5f}), 4, at::kCPU);
  EXPECT_FLOAT_EQ(bias[0][3][0].item<float>(), -1.5f);
  EXPECT_FLOAT_EQ(bias[0][3][3].item<float>(), 0.0f);
}

TEST(Ops, AttentionMatchesTheTextbookFormula) {
  const auto num = Numerics::parse("float32", "cpu");
  const auto q = at::randn({1, 2, 5, 4}), k = at::randn({1, 2, 5, 4}), v = at::randn({1, 2, 5, 4});
  auto scores = at::matmul(q, k.transpose(-1, -2)) / 2.0;
  scores = scores.masked_fill(at::ones({5, 5}, at::kBool).triu(1), -INFINITY);
  const auto expected = at::matmul(at::softmax(scores, -1), v);
  EXPECT_TRUE(at::allclose(ops::attention(q, k, v, true, {}, num), expected, 1e-5, 1e-6));
}

// Values narrower than queries and keys (DeepSeek's latent attention): the same formula,
// the output as wide as the values, in blocks of queries too.
TEST(Ops, ValuesMayBeNarrowerThanQueriesAndKeys) {
  const auto num = Numerics::parse("float32", "cpu");
  const auto q = at::randn({2, 3, 6, 5}), k = at::randn({2, 3, 6, 5}), v = at::randn({2, 3, 6, 2});
  auto scores = at::matmul(q, k.transpose(-1, -2)) / std::sqrt(5.0);
  scores = scores.masked_fill(at::ones({6, 6}, at::kBool).triu(1), -INFINITY);
  const auto expected = at::matmul(at::softmax(scores, -1), v);
  ops::AttentionShape shape;
  EXPECT_TRUE(at::allclose(ops::attention(q, k, v, shape, num), expected, 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(ops::attention(q, k, v, shape, num, 4), expected, 1e-5, 1e-6));
}

// Scores of every query against every key in one product: the formula, no blocks.
at::Tensor textbookAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                             const at::Tensor& bias) {
  const int64_t groups = q.size(1) / k.size(1), t = q.size(2);
  const auto keys = k.repeat_interleave(groups, 1), values = v.repeat_interleave(groups, 1);
  auto scores = at::matmul(q, keys.transpose(-1, -2)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (bias.defined()) scores = scores + bias;
  if (causal) scores = scores.masked_fill(at::ones({t, t}, at::kBool).triu(1), -INFINITY);
  return at::matmul(at::softmax(scores, -1), values);
}

TEST(Ops, QueryBlocksDoNotChangeTheResult) {
  const auto num = Numerics::parse("float32", "cpu");
  // 4 query heads on 2 key heads, 11 positions: blocks of 1, 3 (a short last block), 11 and
  // the default; causal and bidirectional; with and without an ALiBi bias.
  const auto q = at::randn({2, 4, 11, 8}), k = at::randn({2, 2, 11, 8}), v = at::randn({2, 2, 11, 8});
  const auto bias = ops::alibiBias(ops::alibiSlopes(4), 11, at::kCPU);
  for (bool causal : {true, false})
    for (const auto& b : {at::Tensor(), bias}) {
      const auto expected = textbookAttention(q, k, v, causal, b);
      for (int64_t block : {int64_t{1}, int64_t{3}, int64_t{11}, int64_t{0}, ops::kQueryBlock})
        EXPECT_TRUE(at::allclose(ops::attention(q, k, v, causal, b, num, block), expected, 1e-5, 1e-6))
            << "causal " << causal << ", bias " << b.defined() << ", block " << block;
    }
}

TEST(Ops, QueryBlocksKeepTheFloat16Rounding) {
  // Emulated float16: every stored value rounded; blocks must not round anything else.
  const auto num = Numerics::parse("float16", "cpu");
  const auto q = num.fit(at::randn({1, 2, 9, 4})), k = num.fit(at::randn({1, 2, 9, 4})), v = num.fit(at::randn({1, 2, 9, 4}));
  EXPECT_TRUE(at::equal(ops::attention(q, k, v, true, {}, num, 2), ops::attention(q, k, v, true, {}, num, 0)));
}

TEST(Ops, GroupedQueryAttentionSharesKeyHeads) {
  const auto num = Numerics::parse("float32", "cpu");
  const auto q = at::randn({2, 4, 3, 8}), k = at::randn({2, 2, 3, 8}), v = at::randn({2, 2, 3, 8});
  const auto grouped = ops::attention(q, k, v, true, {}, num);
  const auto expanded = ops::attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), true, {}, num);
  EXPECT_TRUE(at::allclose(grouped, expanded));
}

TEST(Ops, RotaryRotatesPairsOfHalves) {
  const auto num = Numerics::parse("float32", "cpu");
  const auto tables = ops::rotaryTables(3, {1.0, 0.01}, num);  // theta 10000 over 4 dims
  // Position 2, frequency index 1: angle 2 * 10000^(-2/4) = 0.02.
  EXPECT_NEAR(tables.cos[2][1].item<float>(), std::cos(0.02f), 1e-7);
  EXPECT_NEAR(tables.sin[2][3].item<float>(), std::sin(0.02f), 1e-7);
  const auto x = at::tensor({1.0f, 0.0f, 0.0f, 0.0f}).view({1, 1, 1, 4}).expand({1, 1, 3, 4});
  const auto y = ops::applyRotary(x, tables);
  EXPECT_NEAR(y[0][0][2][0].item<float>(), std::cos(2.0f), 1e-6);
  EXPECT_NEAR(y[0][0][2][2].item<float>(), std::sin(2.0f), 1e-6);
  // Rotation keeps norms.
  EXPECT_TRUE(at::allclose(y.norm(2, -1), x.norm(2, -1)));
}

// GPT-NeoX's partial rotary: the first 2F dims turn as a head of 2F would, the rest pass.
TEST(Ops, PartialRotaryTurnsTheFirstDimsOnly) {
  const auto num = Numerics::parse("float32", "cpu");
  const auto x = at::randn({1, 2, 5, 8});
  const auto tables = ops::rotaryTables(5, {1.0, 0.1}, num);
  const auto y = ops::applyRotary(x, tables);
  EXPECT_TRUE(at::equal(y.narrow(-1, 4, 4), x.narrow(-1, 4, 4)));
  EXPECT_TRUE(at::allclose(y.narrow(-1, 0, 4), ops::applyRotary(x.narrow(-1, 0, 4).contiguous(), tables)));
  EXPECT_FALSE(at::allclose(y.narrow(-1, 0, 4), x.narrow(-1, 0, 4)));
}

// Sliding windows (keys i > n - w), a logit scale and Gemma-2's soft cap against the
// formula, with every query block size (the window's first key moves inside a block).
TEST(Ops, WindowsScalesAndCapsMatchTheFormula) {
  const auto num = Numerics::parse("float32", "cpu");
  const int64_t t = 11, window = 3;
  const auto q = at::randn({2, 4, t, 8}) * 2, k = at::randn({2, 2, t, 8}), v = at::randn({2, 2, t, 8});
  const auto keys = k.repeat_interleave(2, 1), values = v.repeat_interleave(2, 1);
  const auto n = at::arange(t).unsqueeze(1), i = at::arange(t).unsqueeze(0);
  auto scores = at::matmul(q, keys.transpose(-1, -2)) * 0.7;
  scores = at::tanh(scores / 1.5) * 1.5;
  scores = scores.masked_fill(i.gt(n).logical_or(i.le(n - window)), -INFINITY);
  const auto expected = at::matmul(at::softmax(scores, -1), values);
  ops::AttentionShape shape;
  shape.window = window;
  shape.scale = 0.7;
  shape.logit_cap = 1.5;
  for (int64_t block : {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{0}})
    EXPECT_TRUE(at::allclose(ops::attention(q, k, v, shape, num, block), expected, 1e-5, 1e-6)) << "block " << block;
  shape.window = t;  // a window as long as the sequence is no window
  shape.logit_cap = 0;
  shape.scale = 0;
  EXPECT_TRUE(at::allclose(ops::attention(q, k, v, shape, num), textbookAttention(q, k, v, true, {}), 1e-5, 1e-6));
}

// A bidirectional window (ModernBERT's local blocks): key i seen by query n when |n - i| < w,
// with every query block size (the span of keys moves at both ends).
TEST(Ops, ABidirectionalWindowSeesBothSidesOfTheQuery) {
  const auto num = Numerics::parse("float32", "cpu");
  const int64_t t = 11, window = 3;
  const auto q = at::randn({2, 4, t, 8}), k = at::randn({2, 2, t, 8}), v = at::randn({2, 2, t, 8});
  const auto n = at::arange(t).unsqueeze(1), i = at::arange(t).unsqueeze(0);
  const auto scores = (at::matmul(q, k.repeat_interleave(2, 1).transpose(-1, -2)) / std::sqrt(8.0))
                          .masked_fill((i - n).abs().ge(window), -INFINITY);
  const auto expected = at::matmul(at::softmax(scores, -1), v.repeat_interleave(2, 1));
  ops::AttentionShape shape;
  shape.causal = false;
  shape.window = window;
  for (int64_t block : {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{0}})
    EXPECT_TRUE(at::allclose(ops::attention(q, k, v, shape, num, block), expected, 1e-5, 1e-6)) << "block " << block;
  EXPECT_FALSE(at::allclose(ops::attention(q, k, v, false, {}, num), expected, 1e-3, 1e-3));  // the window acts
}

// gpt-oss's sinks: one more logit per head in every row's softmax, its weight dropped, with
// every query block size and grouped heads.
TEST(Ops, ASinkIsOneMoreLogitInEachRowsSoftmax) {
  const auto num = Numerics::parse("float32", "cpu");
  at::manual_seed(11);
  const int64_t t = 9;
  const auto q = at::randn({2, 4, t, 8}), k = at::randn({2, 2, t, 8}), v = at::randn({2, 2, t, 8});
  const auto sinks = at::tensor({2.0f, -1.0f, 0.5f, 3.0f});
  const auto n = at::arange(t).unsqueeze(1), i = at::arange(t).unsqueeze(0);
  const auto scores = (at::matmul(q, k.repeat_interleave(2, 1).transpose(-1, -2)) / std::sqrt(8.0)).masked_fill(i.gt(n), -INFINITY);
  const auto with_sink = at::cat({scores, sinks.view({1, 4, 1, 1}).expand({2, 4, t, 1})}, -1);
  const auto weights = at::softmax(with_sink, -1).narrow(-1, 0, t);
  const auto expected = at::matmul(weights, v.repeat_interleave(2, 1));
  ops::AttentionShape shape;
  shape.sinks = sinks;
  for (int64_t block : {int64_t{1}, int64_t{4}, int64_t{0}})
    EXPECT_TRUE(at::allclose(ops::attention(q, k, v, shape, num, block), expected, 1e-5, 1e-6)) << "block " << block;
  EXPECT_LT(weights.sum(-1).mean().item<double>(), 0.9);  // the sinks took weight
  positions::BlockPositions p;
  p.sinks = {2.0, -1.0, 0.5, 3.0};
  EXPECT_TRUE(at::equal(ops::attentionShape(p, true).sinks, sinks));
  EXPECT_FALSE(ops::attentionShape(positions::BlockPositions{}, true).sinks.defined());
}

TEST(Ops, NormsAndActivations) {
  const auto num = Numerics::parse("float32", "cpu");
  const auto x = at::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({1, 4});
  const auto rms = ops::rmsNorm(x, at::ones({4}), 0.0, num);
  EXPECT_NEAR(rms.pow(2).mean().item<float>(), 1.0f, 1e-6);
  const auto ln = ops::layerNorm(x, at::ones({4}), at::zeros({4}), 0.0, num);
  EXPECT_NEAR(ln.mean().item<float>(), 0.0f, 1e-6);
  EXPECT_NEAR(ops::activation("gelu_new", at::tensor({1.0f}), num).item<float>(), 0.841192f, 1e-5);
  EXPECT_NEAR(ops::activation("gelu", at::tensor({1.0f}), num).item<float>(), 0.841345f, 1e-5);
  EXPECT_FALSE(ops::isKnownActivation("tanh_but_wrong"));
}

TEST(PositionBias, IsEachHeadsTermByDistance) {
  positions::BlockPositions p;
  p.shared.mask.causal = false;
  p.per_head = {positions::relativeBiasTerm({{0.4, -0.3, 0.9, 1.5, 0.2}, 2}), positions::alibiTerm(0.5)};
  const auto bias = ops::positionBias(p, 2, 5, at::kCPU);
  ASSERT_EQ(bias.sizes(), (std::vector<int64_t>{2, 5, 5}));
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t n = 0; n < 5; ++n)
      for (int64_t i = 0; i < 5; ++i)
        EXPECT_FLOAT_EQ(bias[h][n][i].item<float>(), static_cast<float>(p.additive(h).at(n - i)));
  EXPECT_FALSE(ops::positionBias(positions::BlockPositions{}, 2, 5, at::kCPU).defined());
}

TEST(PositionBias, AlibiIsTheFloat32Product) {
  // Bit for bit what the float32 -slope x (n - i) gives: the forward's ALiBi as before.
  const auto slopes = ops::alibiSlopes(3);
  const auto pos = at::arange(6, at::kFloat);
  const auto expected = -slopes.view({-1, 1, 1}) * (pos.unsqueeze(1) - pos.unsqueeze(0)).unsqueeze(0);
  EXPECT_TRUE(at::equal(ops::alibiBias(slopes, 6, at::kCPU), expected));
}

TEST(AttentionShape, TakesTheCallsMaskAndTheBlocksTerms) {
  positions::BlockPositions p;
  p.shared.mask.window = 4;
  p.shared.scale = 0.5;
  p.shared.logit_cap = 20;
  const auto causal = ops::attentionShape(p, true);
  EXPECT_TRUE(causal.causal);
  EXPECT_EQ(causal.window, 4);
  EXPECT_EQ(causal.scale, 0.5);
  EXPECT_EQ(causal.logit_cap, 20);
  EXPECT_FALSE(causal.bias.defined());
  const auto both_ways = ops::attentionShape(p, false, at::zeros({1, 3, 3}));
  EXPECT_FALSE(both_ways.causal);
  EXPECT_EQ(both_ways.window, 4);  // a bidirectional call's window masks both sides
  EXPECT_TRUE(both_ways.bias.defined());
}

}  // namespace
}  // namespace posgeom::testing
