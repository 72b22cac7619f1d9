#pragma once
// posgeom bench's timed rounds and what they say. The machine may be shared: its speed
// drifts and it stalls now and then. Each round runs the three passes back to back in an
// order that rotates from round to round; tokens/s come from medians, and the cost of
// the accumulators from the median of same-round ratios, so that one slow pass or one
// slow round does not move the result. Torch-free.
#include <array>
#include <vector>

namespace posgeom::jobs {

enum class BenchPass { kForward, kAnalyze, kAnalyzeHeads };

// The order of the three passes in round `round` (0-based): each pass goes first, second
// and third equally often, so none always follows the same one.
std::array<BenchPass, 3> passOrder(int round);

struct RoundSeconds {
  double forward = 0, analyze = 0, analyze_heads = 0;
  // Of analyze's and analyze --heads' seconds, those spent inside the accumulators (CPU,
  // where their calls return when done; 0 where not timed).
  double analyze_accumulating = 0, analyze_heads_accumulating = 0;
};

struct PassRates {
  double forward_tokens_per_s = 0;
  double analyze_tokens_per_s = 0;        // forward's rate over the median analyze/forward ratio
  double analyze_heads_tokens_per_s = 0;  // and over the median heads/forward ratio
  // The accumulators' own time over the rest of the same pass (median; 0 where not timed):
  // the cost of analysis measured within one pass, which no drift between passes reaches.
  double analyze_accumulator_share = 0, analyze_heads_accumulator_share = 0;
};

// The middle value (the mean of the middle two); needs at least one.
double median(std::vector<double> values);

// Needs at least one round.
PassRates ratesFromRounds(const std::vector<RoundSeconds>& rounds, double tokens_per_pass);

}  // namespace posgeom::jobs
