// The acceptance test of the positions vocabulary: a positional variant added by hand (a
// relative-bias table per head) reaches the forward's attention (model/ops) and the heads'
// positional kernel (heads/) through the vocabulary alone, and the two agree on constant
// content, where only position moves the attention.
#include <Eigen/Dense>

#include "posgeom/heads/positional_kernel.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/positions/head_positions.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace ops = model::ops;
using positions::BlockPositions;

constexpr int64_t kPositions = 8, kHeads = 2, kWidth = 6;
constexpr int64_t kHeadDim = kPositions;  // values one-hot in position: the attention's output is its map

Eigen::MatrixXd toEigen(const at::Tensor& t) {
  const auto d = t.to(at::kDouble).contiguous();
  Eigen::MatrixXd m(d.size(0), d.size(1));
  for (int64_t r = 0; r < d.size(0); ++r)
    for (int64_t c = 0; c < d.size(1); ++c) m(r, c) = d[r][c].item<double>();
  return m;
}

// A tiny one-block "model": per-head query and key maps [H, dh, d] and one content vector x
// [d] at every position. Returns the forward's attention maps [H, T, T] under `positions`.
at::Tensor forwardAttention(const at::Tensor& wq, const at::Tensor& wk, const at::Tensor& x,
                            const BlockPositions& positions) {
  const auto num = model::Numerics::parse("float32", "cpu");
  const auto content = x.expand({kPositions, kWidth});  // [T, d]: the same input everywhere
  auto q = at::einsum("hed,td->hte", {wq, content}).unsqueeze(0);  // [1, H, T, dh]
  auto k = at::einsum("hed,td->hte", {wk, content}).unsqueeze(0);
  if (!positions.shared.rope.inverse_frequencies.empty()) {
    const auto rope = ops::rotaryTables(kPositions, positions.shared.rope, num);
    q = ops::applyRotary(q, rope);
    k = ops::applyRotary(k, rope);
  }
  const auto v = at::eye(kPositions).expand({1, kHeads, kPositions, kPositions});
  const auto bias = ops::positionBias(positions, kHeads, kPositions, at::kCPU);
  const auto shape = ops::attentionShape(positions, positions.shared.mask.causal, bias);
  return ops::attention(q, k, v.contiguous(), shape, num).squeeze(0);
}

// The heads analysis of the same block: each head's positional kernel with the mean input x.
Eigen::MatrixXd headKernel(const at::Tensor& wq, const at::Tensor& wk, const at::Tensor& x,
                           const BlockPositions& positions, int64_t h) {
  heads::HeadMaps maps{toEigen(wq[h]), Eigen::VectorXd::Zero(kHeadDim), toEigen(wk[h]), Eigen::VectorXd()};
  const Eigen::MatrixXd means = toEigen(x.unsqueeze(0)).replicate(kPositions, 1);
  heads::KernelSettings settings;
  settings.positions = positions.head(h);
  settings.skip = 0;
  return heads::positionalKernel(maps, means, settings);
}

// Each head's table over d = n - i in -3 .. 3 (farther keys share the end buckets).
BlockPositions relativeBias(bool causal) {
  BlockPositions p;
  p.shared.mask.causal = causal;
  p.per_head = {positions::relativeBiasTerm({{0.4, -0.3, 0.9, 1.5, 0.2, -0.6, -1.1}, 3}),
                positions::relativeBiasTerm({{-1.0, 0.0, 0.3, 0.0, 1.2, 0.7, 0.5}, 3})};
  return p;
}

void expectKernelsMatchAttention(const BlockPositions& positions) {
  at::manual_seed(7);
  const auto wq = at::randn({kHeads, kHeadDim, kWidth}), wk = at::randn({kHeads, kHeadDim, kWidth});
  const auto x = at::randn({kWidth});
  const auto attention = forwardAttention(wq, wk, x, positions);
  for (int64_t h = 0; h < kHeads; ++h) {
    const Eigen::MatrixXd kernel = headKernel(wq, wk, x, positions, h);
    const Eigen::MatrixXd forward = toEigen(attention[h]);
    EXPECT_LT((kernel - forward).cwiseAbs().maxCoeff(), 2e-5) << "head " << h << "\nkernel\n"
                                                             << kernel << "\nforward\n" << forward;
  }
}

TEST(HandMadeRelativeBias, HeadsKernelEqualsTheForwardsAttentionCausal) {
  expectKernelsMatchAttention(relativeBias(true));
}

TEST(HandMadeRelativeBias, HeadsKernelEqualsTheForwardsAttentionBidirectional) {
  expectKernelsMatchAttention(relativeBias(false));
}

TEST(HandMadeRelativeBias, AgreesWithEveryOtherTermOfTheVocabulary) {
  // The table beside a window, a scale, a soft cap and interleaved RoPE.
  auto p = relativeBias(true);
  p.shared.mask.window = 5;
  p.shared.scale = 0.3;
  p.shared.logit_cap = 2.0;
  p.shared.rope = {{1.0, 0.3, 0.1, 0.03}, positions::RopePairing::kInterleaved};
  expectKernelsMatchAttention(p);
}

TEST(HandMadeRelativeBias, AgreesUnderABidirectionalWindow) {
  auto p = relativeBias(false);
  p.shared.mask.window = 3;  // keys within 2 of the query, on both sides
  expectKernelsMatchAttention(p);
}

TEST(HandMadeRelativeBias, AgreesWithSinksInTheSoftmax) {
  auto p = relativeBias(true);
  p.sinks = {1.5, -0.5};  // gpt-oss: each head's sink logit takes a share of every row
  expectKernelsMatchAttention(p);
}

TEST(HandMadeRelativeBias, TheTableMovesTheAttention) {
  // Not a test that cannot fail: without the table the maps differ.
  at::manual_seed(7);
  const auto wq = at::randn({kHeads, kHeadDim, kWidth}), wk = at::randn({kHeads, kHeadDim, kWidth});
  const auto x = at::randn({kWidth});
  const auto with = forwardAttention(wq, wk, x, relativeBias(true));
  BlockPositions plain;
  const auto without = forwardAttention(wq, wk, x, plain);
  EXPECT_GT((with - without).abs().max().item<double>(), 0.05);
}

TEST(HandMadeRelativeBias, AlibiTakesTheSamePath) {
  BlockPositions p;
  p.per_head = ops::alibiTerms(ops::alibiSlopes(kHeads));
  expectKernelsMatchAttention(p);
}

// The variant as a family would add it: a model written for this test (one block; constant
// content in; each head's attention map out, values one-hot in position) whose only
// positional code is its kernelPositions, read by the forward and by the heads alike.
class RelativeBiasModel final : public model::Model {
 public:
  RelativeBiasModel(at::Tensor wq, at::Tensor wk, at::Tensor x, std::vector<positions::AdditiveTerm> tables)
      : Model(config(), model::Numerics::parse("float32", "cpu")), wq_(std::move(wq)), wk_(std::move(wk)),
        x_(std::move(x)), tables_(std::move(tables)) {}

  at::Tensor embed(const at::Tensor& ids, model::BlockContext& context) const override {
    context.attention_bias = positionBias(ids.size(1));
    return x_.expand({ids.size(0), ids.size(1), kWidth});
  }
  at::Tensor block(int64_t i, const at::Tensor& x, const model::BlockContext& context) const override {
    const auto q = at::einsum("hed,btd->bhte", {wq_, x}), k = at::einsum("hed,btd->bhte", {wk_, x});
    const auto v = at::eye(context.seq_len).expand({x.size(0), kHeads, context.seq_len, context.seq_len}).contiguous();
    return ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), numerics()));
  }
  model::ForwardOutputs finish(const at::Tensor&, const model::ForwardRequest&) const override { return {}; }
  model::QueryKeyMaps queryKeyMaps(int64_t) const override {
    return {wq_, at::zeros({kHeads, kHeadDim}), wk_, at::zeros({kHeads, kHeadDim})};
  }
  bool hasLmHead() const override { return false; }
  positions::BlockPositions kernelPositions(int64_t block, int64_t seq_len) const override {
    auto p = Model::kernelPositions(block, seq_len);
    p.per_head = tables_;
    return p;
  }

 private:
  static model::ModelConfig config() {
    model::ModelConfig c;
    c.model_type = "relative-bias-test";
    c.vocab_size = 1;
    c.hidden_size = kWidth;
    c.num_layers = 1;
    c.num_heads = kHeads;
    c.positions = model::PositionScheme::kNone;
    return c;
  }
  at::Tensor wq_, wk_, x_;
  std::vector<positions::AdditiveTerm> tables_;
};

struct BlockOutput final : model::LayerObserver {
  at::Tensor maps;
  void onHidden(int64_t layer, const at::Tensor& hidden) override {
    if (layer == 1) maps = hidden.clone();
  }
};

TEST(HandMadeRelativeBias, AModelsKernelPositionsReachTheForwardAndTheHeads) {
  at::manual_seed(11);
  const auto wq = at::randn({kHeads, kHeadDim, kWidth}), wk = at::randn({kHeads, kHeadDim, kWidth});
  const auto x = at::randn({kWidth});
  const RelativeBiasModel net(wq, wk, x, relativeBias(true).per_head);
  BlockOutput out;
  model::ForwardRequest request;
  request.ids = at::zeros({1, kPositions}, at::kLong);
  request.observer = &out;
  net.forward(request);
  ASSERT_TRUE(out.maps.defined());
  const auto positions = net.kernelPositions(0, kPositions);
  const auto maps = net.queryKeyMaps(0);
  for (int64_t h = 0; h < kHeads; ++h) {
    heads::HeadMaps head{toEigen(maps.wq[h]), toEigen(maps.bq[h].unsqueeze(1)).col(0), toEigen(maps.wk[h]),
                         Eigen::VectorXd()};
    heads::KernelSettings settings;
    settings.positions = positions.head(h);
    settings.skip = 0;
    const Eigen::MatrixXd kernel =
        heads::positionalKernel(head, toEigen(x.unsqueeze(0)).replicate(kPositions, 1), settings);
    const Eigen::MatrixXd forward = toEigen(out.maps[0].narrow(1, h * kPositions, kPositions));
    EXPECT_LT((kernel - forward).cwiseAbs().maxCoeff(), 2e-5) << "head " << h;
  }
}

}  // namespace
}  // namespace posgeom::testing
