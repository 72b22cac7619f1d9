#include "posgeom/model/model_config.h"

#include <cmath>
#include <sstream>

namespace posgeom::model {

const char* positionSchemeName(PositionScheme scheme) {
  switch (scheme) {
    case PositionScheme::kLearned: return "learned absolute";
    case PositionScheme::kAlibi: return "ALiBi";
    case PositionScheme::kRope: return "RoPE";
    case PositionScheme::kNone: return "none (causal mask only)";
    case PositionScheme::kRelativeBias: return "relative bias";
    case PositionScheme::kDisentangled: return "disentangled relative";
  }
  return "unknown";
}

std::string describePositions(const ModelConfig& c) {
  std::string s = positionSchemeName(c.positions);
  std::string unrotated;
  int64_t count = 0;
  for (int64_t b = 0; b < c.num_layers; ++b)
    if (c.positions == PositionScheme::kRope && !c.rotates(b)) unrotated += (count++ ? ", " : "") + std::to_string(b);
  // A scaled RoPE names its scaling (yarn, longrope, llama3, linear, dynamic).
  auto scaling = [](const RopeConfig& rope) { return rope.type == "default" ? std::string() : " with " + rope.type + " scaling"; };
  if (c.positions == PositionScheme::kRope && c.local_rope) {
    auto base = [](double theta) {  // 1000000, not 1e+06
      std::ostringstream out;
      if (theta == std::floor(theta) && theta < 1e15)
        out << static_cast<int64_t>(theta);
      else
        out << theta;
      return out.str();
    };
    s += " (base " + base(c.local_rope->theta) + scaling(*c.local_rope) + " in the blocks with a window, " + base(c.rope.theta) +
         scaling(c.rope) + " in the others)";
  } else if (c.positions == PositionScheme::kRope) {
    s += scaling(c.rope);
  }
  // Partial rotary (GPT-NeoX, Phi, StableLM, ...) and interleaved pairs (Cohere, GPT-J), as
  // the heads turn them; DeepSeek's latent attention says its own below.
  if (c.positions == PositionScheme::kRope && !c.latent.any()) {
    const int64_t head_dim = c.head_dim > 0 ? c.head_dim : c.num_heads > 0 ? c.hidden_size / c.num_heads : 0;  // 0: sizes not read
    const auto turned = static_cast<int64_t>(static_cast<double>(head_dim) * c.rope.partial_rotary_factor);
    if (turned < head_dim) s += " on the first " + std::to_string(turned) + " of each head's " + std::to_string(head_dim) + " dims";
    if (c.rope.interleaved) s += " in interleaved pairs";
  }
  if (c.positions == PositionScheme::kDisentangled) {
    const auto& d = c.disentangled;
    s += std::string(" (") + (d.c2p && d.p2c ? "c2p and p2c" : d.c2p ? "c2p" : "p2c") + ", " + std::to_string(2 * d.span) +
         " relative positions" + (d.buckets > 0 ? " in log buckets out to " + std::to_string(d.max_relative) : std::string()) + ")" +
         (d.absolute_positions ? " and learned absolute" : "");
  }
  if (c.latent.any())  // DeepSeek's: RoPE turns a part of each head that all heads share for keys
    s += " on " + std::to_string(c.latent.rope_dims) + " of each head's " + std::to_string(c.headDim()) +
         " query-key dims (latent attention)";
  if (c.positions == PositionScheme::kRelativeBias)
    s += " (" + std::to_string(c.relative_buckets) + " buckets out to distance " + std::to_string(c.relative_max_distance) + ")";
  return count == 0 ? s : s + " except block" + (count > 1 ? "s " : " ") + unrotated + " (NoPE)";
}

}  // namespace posgeom::model
