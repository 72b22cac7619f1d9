#include "posgeom/model/model_config.h"

namespace posgeom::model {

const char* positionSchemeName(PositionScheme scheme) {
  switch (scheme) {
    case PositionScheme::kLearned: return "learned absolute";
    case PositionScheme::kAlibi: return "ALiBi";
    case PositionScheme::kRope: return "RoPE";
    case PositionScheme::kNone: return "none (causal mask only)";
  }
  return "unknown";
}

std::string describePositions(const ModelConfig& c) {
  std::string s = positionSchemeName(c.positions);
  std::string unrotated;
  int64_t count = 0;
  for (int64_t b = 0; b < c.num_layers; ++b)
    if (c.positions == PositionScheme::kRope && !c.rotates(b)) unrotated += (count++ ? ", " : "") + std::to_string(b);
  return count == 0 ? s : s + " except block" + (count > 1 ? "s " : " ") + unrotated + " (NoPE)";
}

}  // namespace posgeom::model
