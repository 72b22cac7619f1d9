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
  for (int64_t b = 0; b < c.num_layers; ++b)
    if (c.positions == PositionScheme::kRope && !c.rotates(b)) unrotated += (unrotated.empty() ? "" : ", ") + std::to_string(b);
  return unrotated.empty() ? s : s + "; NoPE (not turned) in blocks " + unrotated;
}

}  // namespace posgeom::model
