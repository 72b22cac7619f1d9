#include "posgeom/positions/rope.h"

#include <algorithm>
#include <cmath>

namespace posgeom::positions {

std::vector<double> ropeInverseFrequencies(const RopeConfig& rope, int64_t head_dim, int64_t max_positions,
                                           int64_t seq_len) {
  const auto dim = static_cast<int64_t>(static_cast<double>(head_dim) * rope.partial_rotary_factor);
  double base = rope.theta;
  if (rope.type == "dynamic" && max_positions > 0 && seq_len > max_positions)
    base *= std::pow(rope.factor * static_cast<double>(seq_len) / static_cast<double>(max_positions) - (rope.factor - 1),
                     static_cast<double>(dim) / static_cast<double>(dim - 2));
  std::vector<double> inv(static_cast<size_t>(dim / 2));
  for (int64_t j = 0; j < dim / 2; ++j)
    inv[static_cast<size_t>(j)] = 1.0 / std::pow(base, static_cast<double>(2 * j) / static_cast<double>(dim));
  if (rope.type == "linear")
    for (auto& f : inv) f /= rope.factor;
  if (rope.type == "longrope") {
    // The factors of the window's length: one window length per run, as transformers picks them
    // by the longest position it sees. Their count is held to the pairs when the config is read.
    const auto& factors = seq_len > rope.original_max_positions ? rope.long_factor : rope.short_factor;
    for (size_t j = 0; j < inv.size() && j < factors.size(); ++j) inv[j] /= factors[j];
  }
  if (rope.type == "yarn") {
    // The pair whose wavelength fits `rotations` times into the pretraining context.
    const double context = static_cast<double>(rope.original_max_positions), d = static_cast<double>(dim);
    auto pair_turning = [&](double rotations) { return d * std::log(context / (rotations * 2 * M_PI)) / (2 * std::log(base)); };
    double low = pair_turning(rope.beta_fast), high = pair_turning(rope.beta_slow);
    if (rope.truncate) low = std::floor(low), high = std::ceil(high);
    low = std::max(low, 0.0), high = std::min(high, d - 1);
    if (low == high) high += 0.001;  // as transformers: no division by zero
    for (int64_t j = 0; j < dim / 2; ++j) {
      const double kept = 1 - std::clamp((static_cast<double>(j) - low) / (high - low), 0.0, 1.0);
      auto& f = inv[static_cast<size_t>(j)];
      f = f / rope.factor * (1 - kept) + f * kept;
    }
  }
  if (rope.type == "llama3") {
    // Long wavelengths slowed by the factor, short ones kept, the band between interpolated.
    const double context = static_cast<double>(rope.original_max_positions);
    const double low_wavelength = context / rope.low_freq_factor, high_wavelength = context / rope.high_freq_factor;
    for (auto& f : inv) {
      const double wavelength = 2 * M_PI / f;
      if (wavelength > low_wavelength) {
        f /= rope.factor;
      } else if (wavelength >= high_wavelength) {
        const double smooth = (context / wavelength - rope.low_freq_factor) / (rope.high_freq_factor - rope.low_freq_factor);
        f = (1 - smooth) * f / rope.factor + smooth * f;
      }
    }
  }
  return inv;
}

}  // namespace posgeom::positions
