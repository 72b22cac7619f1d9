#include "rope_config.h"

#include <string>

#include "architectures.h"

namespace posgeom::model {
namespace {

double nestedPositive(const io::JsonConfig& c, const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) c.fail(where + "." + key + " must be a positive number");
  return positiveValue(c, j[key], where + "." + key);
}

}  // namespace

RopeConfig readRopeConfig(const io::JsonConfig& c) {
  const auto& j = c.json();
  RopeConfig rope;
  rope.partial_rotary_factor = c.number({"partial_rotary_factor"}, 1.0);
  nlohmann::json scaling = nlohmann::json::object();
  std::string where = "rope_scaling";
  if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
    scaling = j["rope_parameters"];
    where = "rope_parameters";
    rope.theta = nestedPositive(c, scaling, "rope_theta", where);
    if (scaling.contains("partial_rotary_factor")) rope.partial_rotary_factor = nestedPositive(c, scaling, "partial_rotary_factor", where);
  } else {
    // Only the key in use is checked: a stale rope_theta beside rope_parameters is not read.
    rope.theta = positiveNumber(c, {"rope_theta"}, 10000.0);
    if (j.contains("rope_scaling") && j["rope_scaling"].is_object()) scaling = j["rope_scaling"];
  }
  // transformers looks up the scaling by its type and fails without one: a factor alone
  // must not be dropped without a word.
  if (!scaling.contains("rope_type") && !scaling.contains("type") && scaling.contains("factor"))
    c.fail(where + " gives a factor but no rope_type: transformers cannot read it either; add \"rope_type\": "
           "\"linear\", \"dynamic\" or \"llama3\" (or remove the factor)");
  rope.type = scaling.value("rope_type", scaling.value("type", std::string("default")));
  if (rope.type == "linear" || rope.type == "dynamic" || rope.type == "llama3") {
    rope.factor = nestedPositive(c, scaling, "factor", where);
  } else if (rope.type != "default") {
    c.fail("RoPE of type '" + rope.type + "' (" + where + ") is not supported: default, linear, dynamic and llama3 are");
  }
  if (rope.type == "llama3") {
    rope.low_freq_factor = nestedPositive(c, scaling, "low_freq_factor", where);
    rope.high_freq_factor = nestedPositive(c, scaling, "high_freq_factor", where);
    rope.original_max_positions = static_cast<int64_t>(nestedPositive(c, scaling, "original_max_position_embeddings", where));
    if (!(rope.high_freq_factor > rope.low_freq_factor)) c.fail(where + ": high_freq_factor must exceed low_freq_factor");
  }
  if (!(rope.partial_rotary_factor > 0 && rope.partial_rotary_factor <= 1))
    c.fail("partial_rotary_factor must lie in (0, 1]");
  return rope;
}

int64_t requireEvenRotaryDims(const io::JsonConfig& c, const ModelConfig& m, const std::string& key) {
  const auto dims = static_cast<int64_t>(static_cast<double>(m.headDim()) * m.rope.partial_rotary_factor);
  if (dims < 2 || dims % 2 != 0)
    c.fail(key + " must turn an even number of each head's dims (here " + std::to_string(dims) + ")");
  return dims;
}

void partialRotaryFactorOr(const io::JsonConfig& c, ModelConfig& m, double family_default) {
  const auto& j = c.json();
  const bool given = j.contains("partial_rotary_factor") || (j.contains("rope_parameters") && j["rope_parameters"].is_object() &&
                                                            j["rope_parameters"].contains("partial_rotary_factor"));
  if (!given) m.rope.partial_rotary_factor = family_default;
  requireEvenRotaryDims(c, m, "partial_rotary_factor");
}

}  // namespace posgeom::model
