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

}  // namespace posgeom::model
