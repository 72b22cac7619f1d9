#include "mixture.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace mixture = model::mixture;

constexpr int64_t kDim = 6, kWidth = 5, kExperts = 4;

model::ModelConfig mixtureConfig(int64_t per_token, bool normalize, int64_t shared) {
  model::ModelConfig c;
  c.hidden_size = kDim;
  c.activation = "silu";
  c.moe.experts = kExperts;
  c.moe.experts_per_token = per_token;
  c.moe.expert_size = kWidth;
  c.moe.normalize_top_k = normalize;
  c.moe.shared_expert_size = shared;
  return c;
}

mixture::Expert randomExpert(int64_t width) {
  return {at::randn({width, kDim}, at::kDouble), at::randn({width, kDim}, at::kDouble), at::randn({kDim, width}, at::kDouble)};
}

mixture::Mixture randomMixture(const model::ModelConfig& c) {
  mixture::Mixture m;
  m.router = at::randn({kExperts, kDim}, at::kDouble);
  for (int64_t e = 0; e < kExperts; ++e) m.experts.push_back(randomExpert(kWidth));
  if (c.moe.shared_expert_size > 0) {
    m.shared = randomExpert(c.moe.shared_expert_size);
    m.shared_gate = at::randn({1, kDim}, at::kDouble);
  }
  return m;
}

mixture::Mixture toFloat(const mixture::Mixture& m) {
  auto f = [](const at::Tensor& t) { return t.defined() ? t.to(at::kFloat) : t; };
  auto expert = [&](const mixture::Expert& e) { return mixture::Expert{f(e.gate), f(e.up), f(e.down)}; };
  mixture::Mixture out{f(m.router), {}, expert(m.shared), f(m.shared_gate)};
  for (const auto& e : m.experts) out.experts.push_back(expert(e));
  return out;
}

// From the definition, token by token in double: softmax of the router's logits, the k most
// probable experts (renormalised over them when asked), each one's down(silu(gate x) * up x)
// weighted and summed; plus sigmoid(g . x) times the shared expert.
at::Tensor definition(const mixture::Mixture& m, const at::Tensor& tokens, const model::ModelConfig& c) {
  auto silu = [](double v) { return v / (1 + std::exp(-v)); };
  auto expert_out = [&](const mixture::Expert& e, const at::Tensor& x) {
    const auto hidden = (e.gate.matmul(x)).clone();
    const auto up = e.up.matmul(x);
    for (int64_t j = 0; j < hidden.size(0); ++j) hidden[j] = silu(hidden[j].item<double>()) * up[j].item<double>();
    return e.down.matmul(hidden);
  };
  auto out = at::zeros_like(tokens);
  for (int64_t n = 0; n < tokens.size(0); ++n) {
    const auto x = tokens[n];
    const auto logits = m.router.matmul(x);
    std::vector<double> p(kExperts);
    double z = 0;
    for (int64_t e = 0; e < kExperts; ++e) z += p[static_cast<size_t>(e)] = std::exp(logits[e].item<double>());
    for (auto& v : p) v /= z;
    std::vector<int64_t> order(kExperts);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)]; });
    double chosen = 0;
    for (int64_t r = 0; r < c.moe.experts_per_token; ++r) chosen += p[static_cast<size_t>(order[static_cast<size_t>(r)])];
    for (int64_t r = 0; r < c.moe.experts_per_token; ++r) {
      const auto e = order[static_cast<size_t>(r)];
      const double w = p[static_cast<size_t>(e)] / (c.moe.normalize_top_k ? chosen : 1.0);
      out[n] += w * expert_out(m.experts[static_cast<size_t>(e)], x);
    }
    if (m.shared_gate.defined()) {
      const double g = 1 / (1 + std::exp(-m.shared_gate[0].dot(x).item<double>()));
      out[n] += g * expert_out(m.shared, x);
    }
  }
  return out;
}

void expectDefinition(const model::ModelConfig& c) {
  at::manual_seed(3);
  const auto m = randomMixture(c);
  const auto x = at::randn({2, 7, kDim}, at::kDouble);
  const auto num = model::Numerics::parse("float32", "cpu");
  const auto got = mixture::forward(toFloat(m), x.to(at::kFloat), c, num);
  ASSERT_EQ(got.sizes(), x.sizes());
  const auto want = definition(m, x.reshape({-1, kDim}), c).reshape(x.sizes());
  EXPECT_LT((got.to(at::kDouble) - want).abs().max().item<double>(), 1e-4 * (1 + want.abs().max().item<double>()));
}

TEST(Mixture, TopTwoRenormalisedIsTheDefinition) { expectDefinition(mixtureConfig(2, true, 0)); }
TEST(Mixture, TopTwoAsRoutedWithASharedExpertIsTheDefinition) { expectDefinition(mixtureConfig(2, false, 3)); }
TEST(Mixture, EveryExpertATokenIsTheDefinition) { expectDefinition(mixtureConfig(kExperts, false, 0)); }
TEST(Mixture, OneExpertATokenIsTheDefinition) { expectDefinition(mixtureConfig(1, true, 0)); }

// A router that sends every token to expert 2 alone: the output is expert 2's, whatever the
// others hold (the others never run: made of NaN, they would show).
TEST(Mixture, ATokenReachesOnlyTheExpertsItsRouterChooses) {
  auto c = mixtureConfig(1, true, 0);
  auto m = toFloat(randomMixture(c));
  m.router = at::zeros({kExperts, kDim});
  m.router[2].fill_(0);
  m.router[2][0] = 50.0;
  for (int64_t e : {0, 1, 3}) m.experts[static_cast<size_t>(e)].down.fill_(NAN);
  auto x = at::randn({1, 5, kDim});
  x.select(2, 0).fill_(1.0);  // logit 50 for expert 2, 0 for the others
  const auto num = model::Numerics::parse("float32", "cpu");
  const auto got = mixture::forward(m, x, c, num);
  const auto want = mixture::gatedMlp(m.experts[2], x, "silu", num);
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-6));
}

}  // namespace
}  // namespace posgeom::testing
