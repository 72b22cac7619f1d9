#include "posgeom/jobs/bench_rounds.h"

#include <algorithm>
#include <stdexcept>

namespace posgeom::jobs {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::array<BenchPass, 3> passOrder(int round) {
  constexpr std::array<BenchPass, 3> kPasses = {BenchPass::kForward, BenchPass::kAnalyze, BenchPass::kAnalyzeHeads};
  std::array<BenchPass, 3> order{};
  for (int i = 0; i < 3; ++i) order[static_cast<std::size_t>(i)] = kPasses[static_cast<std::size_t>((round + i) % 3)];
  return order;
}

PassRates ratesFromRounds(const std::vector<RoundSeconds>& rounds, double tokens_per_pass) {
  if (rounds.empty()) throw std::invalid_argument("ratesFromRounds: no rounds");
  std::vector<double> forward, analyze_ratio, heads_ratio, analyze_share, heads_share;
  for (const auto& r : rounds) {
    forward.push_back(r.forward);
    analyze_ratio.push_back(r.analyze / r.forward);
    heads_ratio.push_back(r.analyze_heads / r.forward);
    analyze_share.push_back(r.analyze_accumulating / (r.analyze - r.analyze_accumulating));
    heads_share.push_back(r.analyze_heads_accumulating / (r.analyze_heads - r.analyze_heads_accumulating));
  }
  PassRates rates;
  rates.forward_tokens_per_s = tokens_per_pass / median(forward);
  rates.analyze_tokens_per_s = rates.forward_tokens_per_s / median(analyze_ratio);
  rates.analyze_heads_tokens_per_s = rates.forward_tokens_per_s / median(heads_ratio);
  rates.analyze_accumulator_share = median(analyze_share);
  rates.analyze_heads_accumulator_share = median(heads_share);
  return rates;
}

}  // namespace posgeom::jobs
