#pragma once
// RoPE's frequencies as Hugging Face's configs define them, for the forward and the heads
// analysis alike.
#include <cstdint>
#include <string>
#include <vector>

namespace posgeom::positions {

// RoPE as Hugging Face's rope_parameters (rope_scaling before transformers 5) define it:
// the base, the share of each head that turns, and the frequency scalings real models use.
struct RopeConfig {
  double theta = 10000.0;
  std::string type = "default";  // default, linear, dynamic, llama3, yarn, longrope
  double factor = 1.0;           // linear, dynamic, llama3, yarn
  double low_freq_factor = 1.0;  // llama3
  double high_freq_factor = 4.0;
  int64_t original_max_positions = 0;  // llama3, yarn, longrope: the pretraining context
  // yarn: pairs that turn fewer than beta_slow times over the pretraining context are
  // interpolated (slowed by the factor), those that turn more than beta_fast times kept, a
  // linear ramp between (its ends rounded out unless truncate is false); and cos and sin
  // multiplied by attention_factor, so a turning pair's part of every logit by its square.
  double beta_fast = 32.0, beta_slow = 1.0;
  bool truncate = true;
  double attention_factor = 1.0;
  // DeepSeek's mscale_all_dim (0: none): its latent attention's logits scale by the square of
  // 0.1 mscale_all_dim ln(factor) + 1 beside whatever attention_factor does to cos and sin.
  double mscale_all_dim = 0;
  // longrope (Phi-3.5, Phi-4-mini): pair j's frequency divided by short_factor[j] for windows
  // up to original_max_positions, by long_factor[j] for longer ones (cos and sin times
  // attention_factor as YaRN's).
  std::vector<double> short_factor, long_factor;
  double partial_rotary_factor = 1.0;  // the first int(head_dim x factor) dims turn (GPT-NeoX's rotary_pct)
  bool interleaved = false;            // GPT-J: pairs (2j, 2j + 1) turn, not (j, j + r/2)
};

// The inverse frequency of each turning pair (j, j + r/2), r = the rotary dims, for windows
// of `seq_len` (dynamic NTK scaling grows its base past max_positions, as transformers does
// for the longest position it sees). The heads analysis turns by the same angles.
std::vector<double> ropeInverseFrequencies(const RopeConfig& rope, int64_t head_dim, int64_t max_positions,
                                           int64_t seq_len);

}  // namespace posgeom::positions
