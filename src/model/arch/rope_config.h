#pragma once
// RoPE as a Hugging Face config gives it, for every rotary family. Private to model/arch.
#include <optional>

#include "posgeom/io/json_file.h"
#include "posgeom/model/model_config.h"

namespace posgeom::model {

// transformers 5 writes rope_parameters {rope_theta, rope_type, factor, ...,
// partial_rotary_factor}; earlier versions rope_theta, partial_rotary_factor and
// rope_scaling {type or rope_type, factor, ...}. default, linear, dynamic, llama3 and yarn
// (its frequencies, and cos and sin times its attention factor) and longrope (short and long
// factors per pair, chosen by the window's length, and an attention factor) are read.
// Where transformers 5 gives rope_parameters per layer type ({full_attention: ...,
// sliding_attention: ...}, Gemma-3), the full-attention blocks'.
RopeConfig readRopeConfig(const io::JsonConfig& c);
// `layer_type`'s RoPE where rope_parameters is given per layer type and names it; else none.
std::optional<RopeConfig> readLayerTypeRope(const io::JsonConfig& c, const char* layer_type);

// longrope's short and long factors, one per pair each head turns (refused otherwise; the
// head's width is known once the family's reader is done). Nothing for other types.
void requireLongropeFactorsFit(const io::JsonConfig& c, const ModelConfig& m);

// The dims of each head that RoPE turns (head_dim x partial_rotary_factor, as transformers
// truncates it), refused with `key` named unless a positive even number.
int64_t requireEvenRotaryDims(const io::JsonConfig& c, const ModelConfig& m, const std::string& key);
// A family whose partial_rotary_factor has its own default (Phi 0.5, StableLM 0.25): that
// default where the config gives none (top level or in rope_parameters), then the check above.
void partialRotaryFactorOr(const io::JsonConfig& c, ModelConfig& m, double family_default);
// A family whose RoPE base has its own default (Cohere 500,000, Mixtral 1,000,000): that
// base where the config gives neither rope_theta nor rope_parameters.
void ropeThetaOr(const io::JsonConfig& c, ModelConfig& m, double family_default);

}  // namespace posgeom::model
