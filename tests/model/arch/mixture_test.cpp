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

// DeepSeek's routing from its definition, token by token in double: sigmoid scores (V3; the
// choice adds the correction bias) or softmax ones (V2); the best `top_groups` groups by their
// two best choices summed (V3) or their best (V2); the k best choices among their experts;
// their scores (renormalised when asked) times routed_scale; plus the shared expert, ungated.
at::Tensor groupedDefinition(const mixture::Mixture& m, const at::Tensor& tokens, const model::ModelConfig& c) {
  const auto& moe = c.moe;
  const int64_t per_group = kExperts / moe.groups;
  auto out = at::zeros_like(tokens);
  for (int64_t n = 0; n < tokens.size(0); ++n) {
    const auto x = tokens[n];
    const auto logits = m.router.matmul(x);
    std::vector<double> score(kExperts), choice(kExperts);
    double z = 0;
    for (int64_t e = 0; e < kExperts; ++e) z += std::exp(logits[e].item<double>());
    for (int64_t e = 0; e < kExperts; ++e) {
      const double l = logits[e].item<double>();
      score[static_cast<size_t>(e)] = moe.sigmoid_scores ? 1 / (1 + std::exp(-l)) : std::exp(l) / z;
      choice[static_cast<size_t>(e)] = score[static_cast<size_t>(e)] + (moe.sigmoid_scores ? m.score_correction[e].item<double>() : 0.0);
    }
    auto best = [](std::vector<double> v, int64_t k) {  // indices of the k largest
      std::vector<int64_t> order(v.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return v[static_cast<size_t>(a)] > v[static_cast<size_t>(b)]; });
      order.resize(static_cast<size_t>(k));
      return order;
    };
    std::vector<double> group_score(static_cast<size_t>(moe.groups));
    for (int64_t g = 0; g < moe.groups; ++g) {
      const std::vector<double> members(choice.begin() + g * per_group, choice.begin() + (g + 1) * per_group);
      double top = 0;
      for (const int64_t i : best(members, moe.sigmoid_scores ? 2 : 1)) top += members[static_cast<size_t>(i)];
      group_score[static_cast<size_t>(g)] = top;
    }
    const auto groups = best(group_score, moe.top_groups);
    for (int64_t e = 0; e < kExperts; ++e)
      if (std::find(groups.begin(), groups.end(), e / per_group) == groups.end()) choice[static_cast<size_t>(e)] = -1e300;
    const auto chosen = best(choice, moe.experts_per_token);
    double total = 0;
    for (const int64_t e : chosen) total += score[static_cast<size_t>(e)];
    for (const int64_t e : chosen) {
      const double w = score[static_cast<size_t>(e)] / (moe.normalize_top_k ? total : 1.0) * moe.routed_scale;
      out[n] += w * model::mixture::gatedMlp(m.experts[static_cast<size_t>(e)], x.unsqueeze(0), "silu",
                                             model::Numerics::parse("float32", "cpu"))[0];
    }
    out[n] += model::mixture::gatedMlp(m.shared, x.unsqueeze(0), "silu", model::Numerics::parse("float32", "cpu"))[0];
  }
  return out;
}

model::ModelConfig groupedConfig(bool sigmoid, int64_t groups, int64_t top_groups, int64_t per_token) {
  auto c = mixtureConfig(per_token, sigmoid, 3);
  c.moe.grouped_routing = true;
  c.moe.sigmoid_scores = sigmoid;
  c.moe.groups = groups;
  c.moe.top_groups = top_groups;
  c.moe.routed_scale = 2.5;
  return c;
}

void expectGroupedDefinition(const model::ModelConfig& c) {
  at::manual_seed(5);
  auto m = randomMixture(c);
  m.shared_gate = at::Tensor();  // DeepSeek's shared experts run ungated
  if (c.moe.sigmoid_scores) m.score_correction = 0.5 * at::randn({kExperts}, at::kDouble);
  const auto x = at::randn({3, 7, kDim}, at::kDouble);
  auto f = toFloat(m);
  f.score_correction = m.score_correction.defined() ? m.score_correction.to(at::kFloat) : at::Tensor();
  const auto got = mixture::forward(f, x.to(at::kFloat), c, model::Numerics::parse("float32", "cpu"));
  const auto want = groupedDefinition(m, x.reshape({-1, kDim}), c).reshape(x.sizes());
  EXPECT_LT((got.to(at::kDouble) - want).abs().max().item<double>(), 1e-4 * (1 + want.abs().max().item<double>()));
}

TEST(Mixture, SigmoidRoutingByGroupsIsTheDefinition) { expectGroupedDefinition(groupedConfig(true, 2, 1, 2)); }
TEST(Mixture, SigmoidRoutingWithOneGroupIsTheDefinition) { expectGroupedDefinition(groupedConfig(true, 1, 1, 2)); }
// Two experts a token from the one group kept: not the greedy choice whenever the two most
// probable experts lie in different groups.
TEST(Mixture, SoftmaxRoutingByGroupsIsTheDefinition) { expectGroupedDefinition(groupedConfig(false, 2, 1, 2)); }
TEST(Mixture, GreedySoftmaxRoutingIsTheDefinition) { expectGroupedDefinition(groupedConfig(false, 1, 1, 2)); }

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
