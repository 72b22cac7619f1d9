#include "rope_config.h"

#include <cmath>
#include <string>

#include "architectures.h"

namespace posgeom::model {
namespace {

double nestedPositive(const io::JsonConfig& c, const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) c.fail(where + "." + key + " must be a positive number");
  return positiveValue(c, j[key], where + "." + key);
}

}  // namespace

namespace {

// A key of `scaling` that transformers reads with `or`: absent, null or 0 give the default.
double positiveOr(const io::JsonConfig& c, const nlohmann::json& scaling, const char* key, const std::string& where,
                  double fallback) {
  if (!scaling.contains(key) || scaling[key].is_null() || (scaling[key].is_number() && scaling[key].get<double>() == 0))
    return fallback;
  return nestedPositive(c, scaling, key, where);
}

// What YaRN and longrope read alike (transformers 5): the pretraining context from the
// config's original_max_position_embeddings (Phi-3's place), else the scaling's, else
// max_position_embeddings; the factor, else max_position_embeddings over that context.
void readContextAndFactor(const io::JsonConfig& c, const nlohmann::json& scaling, const std::string& where, RopeConfig& rope) {
  const auto& j = c.json();
  const char* context_key = "original_max_position_embeddings";
  if (j.contains(context_key) && !j[context_key].is_null())
    rope.original_max_positions = c.requirePositiveInt({context_key});
  else if (scaling.contains(context_key) && !scaling[context_key].is_null())
    rope.original_max_positions = static_cast<int64_t>(nestedPositive(c, scaling, context_key, where));
  else if (j.contains("max_position_embeddings"))
    rope.original_max_positions = c.requirePositiveInt({"max_position_embeddings"});
  else
    c.fail(where + ": " + rope.type + " needs original_max_position_embeddings (or max_position_embeddings)");
  if (scaling.contains("factor") && !scaling["factor"].is_null())
    rope.factor = nestedPositive(c, scaling, "factor", where);
  else if (j.contains("max_position_embeddings"))
    rope.factor = static_cast<double>(c.requirePositiveInt({"max_position_embeddings"})) / static_cast<double>(rope.original_max_positions);
  else
    c.fail(where + ": " + rope.type + " needs a factor (or max_position_embeddings over original_max_position_embeddings)");
}

// YaRN as transformers 5 computes it (_compute_yarn_parameters): attention_factor, else
// 0.1 ln(factor) + 1 (or the ratio of mscale's to mscale_all_dim's).
void readYarn(const io::JsonConfig& c, const nlohmann::json& scaling, const std::string& where, RopeConfig& rope) {
  readContextAndFactor(c, scaling, where, rope);
  auto mscale = [&](double scale) { return rope.factor <= 1 ? 1.0 : 0.1 * scale * std::log(rope.factor) + 1.0; };
  if (scaling.contains("attention_factor") && !scaling["attention_factor"].is_null()) {
    rope.attention_factor = nestedPositive(c, scaling, "attention_factor", where);
  } else {
    const double m = positiveOr(c, scaling, "mscale", where, 0), all = positiveOr(c, scaling, "mscale_all_dim", where, 0);
    rope.attention_factor = m > 0 && all > 0 ? mscale(m) / mscale(all) : mscale(1);
  }
  rope.mscale_all_dim = positiveOr(c, scaling, "mscale_all_dim", where, 0);
  rope.beta_fast = positiveOr(c, scaling, "beta_fast", where, 32);
  rope.beta_slow = positiveOr(c, scaling, "beta_slow", where, 1);
  if (scaling.contains("truncate") && !scaling["truncate"].is_null()) {
    if (!scaling["truncate"].is_boolean()) c.fail(where + ".truncate must be true or false");
    rope.truncate = scaling["truncate"].get<bool>();
  }
}

// longrope as transformers 5 computes it (_compute_longrope_parameters): short_factor and
// long_factor, one positive divisor a pair; attention_factor, else 1 for a factor up to 1 and
// sqrt(1 + ln(factor) / ln(context)) above.
void readLongrope(const io::JsonConfig& c, const nlohmann::json& scaling, const std::string& where, RopeConfig& rope) {
  readContextAndFactor(c, scaling, where, rope);
  for (auto [key, factors] : {std::pair{"short_factor", &rope.short_factor}, std::pair{"long_factor", &rope.long_factor}}) {
    if (!scaling.contains(key) || !scaling[key].is_array() || scaling[key].empty())
      c.fail(where + ": longrope needs " + key + ", a list of one positive number per rotary pair");
    for (size_t i = 0; i < scaling[key].size(); ++i)
      factors->push_back(positiveValue(c, scaling[key][i], where + "." + key + "[" + std::to_string(i) + "]"));
  }
  if (scaling.contains("attention_factor") && !scaling["attention_factor"].is_null())
    rope.attention_factor = nestedPositive(c, scaling, "attention_factor", where);
  else if (rope.factor > 1)
    rope.attention_factor = std::sqrt(1 + std::log(rope.factor) / std::log(static_cast<double>(rope.original_max_positions)));
}

// The type of RoPE and its parameters in `scaling` (rope_parameters, one layer type's part of
// them, or rope_scaling), `where` naming it.
void readScaling(const io::JsonConfig& c, const nlohmann::json& scaling, const std::string& where, RopeConfig& rope) {
  // transformers looks up the scaling by its type and fails without one: a factor alone
  // must not be dropped without a word.
  if (!scaling.contains("rope_type") && !scaling.contains("type") && scaling.contains("factor"))
    c.fail(where + " gives a factor but no rope_type: transformers cannot read it either; add \"rope_type\": "
           "\"linear\", \"dynamic\" or \"llama3\" (or remove the factor)");
  rope.type = scaling.value("rope_type", scaling.value("type", std::string("default")));
  if (rope.type == "linear" || rope.type == "dynamic" || rope.type == "llama3") {
    rope.factor = nestedPositive(c, scaling, "factor", where);
  } else if (rope.type == "yarn") {
    readYarn(c, scaling, where, rope);
  } else if (rope.type == "longrope") {
    readLongrope(c, scaling, where, rope);
  } else if (rope.type != "default") {
    c.fail("RoPE of type '" + rope.type + "' (" + where + ") is not supported: default, linear, dynamic, llama3, yarn and longrope are");
  }
  if (rope.type == "llama3") {
    rope.low_freq_factor = nestedPositive(c, scaling, "low_freq_factor", where);
    rope.high_freq_factor = nestedPositive(c, scaling, "high_freq_factor", where);
    rope.original_max_positions = static_cast<int64_t>(nestedPositive(c, scaling, "original_max_position_embeddings", where));
    if (!(rope.high_freq_factor > rope.low_freq_factor)) c.fail(where + ": high_freq_factor must exceed low_freq_factor");
  }
}

// rope_parameters (transformers 5): its own, or where it is given per layer type (Gemma-3's
// {full_attention: ..., sliding_attention: ...}) `layer_type`'s; null where not given.
const nlohmann::json* ropeParameters(const io::JsonConfig& c, const char* layer_type, std::string& where) {
  const auto& j = c.json();
  if (!j.contains("rope_parameters") || !j["rope_parameters"].is_object()) return nullptr;
  const auto& parameters = j["rope_parameters"];
  where = "rope_parameters";
  if (!parameters.contains("full_attention") && !parameters.contains("sliding_attention")) return &parameters;
  if (!parameters.contains(layer_type) || !parameters[layer_type].is_object())
    c.fail("rope_parameters is given per layer type but has no object for " + std::string(layer_type));
  where += std::string(".") + layer_type;
  return &parameters[layer_type];
}

// RoPE from one rope_parameters object (rope_theta required, partial_rotary_factor kept
// unless it gives one).
RopeConfig readParameters(const io::JsonConfig& c, const nlohmann::json& parameters, const std::string& where,
                          double partial_rotary_factor) {
  RopeConfig rope;
  rope.partial_rotary_factor = partial_rotary_factor;
  rope.theta = nestedPositive(c, parameters, "rope_theta", where);
  if (parameters.contains("partial_rotary_factor"))
    rope.partial_rotary_factor = nestedPositive(c, parameters, "partial_rotary_factor", where);
  readScaling(c, parameters, where, rope);
  return rope;
}

void requireRotaryFactor(const io::JsonConfig& c, const RopeConfig& rope) {
  if (!(rope.partial_rotary_factor > 0 && rope.partial_rotary_factor <= 1))
    c.fail("partial_rotary_factor must lie in (0, 1]");
}

}  // namespace

RopeConfig readRopeConfig(const io::JsonConfig& c) {
  const auto& j = c.json();
  const double partial = c.number({"partial_rotary_factor"}, 1.0);
  std::string where;
  RopeConfig rope;
  if (const auto* parameters = ropeParameters(c, "full_attention", where)) {
    rope = readParameters(c, *parameters, where, partial);
  } else {
    // Only the key in use is checked: a stale rope_theta beside rope_parameters is not read.
    rope.partial_rotary_factor = partial;
    rope.theta = positiveNumber(c, {"rope_theta"}, 10000.0);
    const bool scaled = j.contains("rope_scaling") && j["rope_scaling"].is_object();
    readScaling(c, scaled ? j["rope_scaling"] : nlohmann::json::object(), "rope_scaling", rope);
  }
  requireRotaryFactor(c, rope);
  return rope;
}

std::optional<RopeConfig> readLayerTypeRope(const io::JsonConfig& c, const char* layer_type) {
  const auto& j = c.json();
  const bool per_type = j.contains("rope_parameters") && j["rope_parameters"].is_object() && j["rope_parameters"].contains(layer_type);
  if (!per_type) return std::nullopt;
  std::string where;
  const auto rope = readParameters(c, *ropeParameters(c, layer_type, where), where, c.number({"partial_rotary_factor"}, 1.0));
  requireRotaryFactor(c, rope);
  return rope;
}

void requireLongropeFactorsFit(const io::JsonConfig& c, const ModelConfig& m) {
  for (const RopeConfig* rope : {&m.rope, m.local_rope ? &*m.local_rope : nullptr}) {
    if (!rope || rope->type != "longrope") continue;
    const auto pairs = static_cast<size_t>(static_cast<double>(m.headDim()) * rope->partial_rotary_factor) / 2;
    for (auto [key, factors] : {std::pair{"short_factor", &rope->short_factor}, std::pair{"long_factor", &rope->long_factor}})
      if (factors->size() != pairs)
        c.fail(std::string("longrope's ") + key + " has " + std::to_string(factors->size()) + " entries, but each head turns " +
               std::to_string(pairs) + " pairs");
  }
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

void ropeThetaOr(const io::JsonConfig& c, ModelConfig& m, double family_default) {
  const auto& j = c.json();
  if (!j.contains("rope_parameters") && !j.contains("rope_theta")) m.rope.theta = family_default;
}

}  // namespace posgeom::model
