#pragma once
// RoPE as a Hugging Face config gives it, for every rotary family. Private to model/arch.
#include "posgeom/io/json_file.h"
#include "posgeom/model/model_config.h"

namespace posgeom::model {

// transformers 5 writes rope_parameters {rope_theta, rope_type, factor, ...,
// partial_rotary_factor}; earlier versions rope_theta, partial_rotary_factor and
// rope_scaling {type or rope_type, factor, ...}. default, linear, dynamic and llama3 are
// read; types that change more than the frequencies (yarn, longrope: a scaled cos and sin)
// would silently give other positions than the model's, so they are refused by name.
RopeConfig readRopeConfig(const io::JsonConfig& c);

// The dims of each head that RoPE turns (head_dim x partial_rotary_factor, as transformers
// truncates it), refused with `key` named unless a positive even number.
int64_t requireEvenRotaryDims(const io::JsonConfig& c, const ModelConfig& m, const std::string& key);
// A family whose partial_rotary_factor has its own default (Phi 0.5, StableLM 0.25): that
// default where the config gives none (top level or in rope_parameters), then the check above.
void partialRotaryFactorOr(const io::JsonConfig& c, ModelConfig& m, double family_default);

}  // namespace posgeom::model
