#pragma once
// Writes a randomly initialised checkpoint in Hugging Face layout, for demos,
// benchmarks and tests that must not depend on downloaded weights. Torch-free.
#include <cstdint>
#include <filesystem>
#include <string>

#include "posgeom/io/dtype.h"

namespace posgeom::model {

struct RandomCheckpointSpec {
  std::string model_type = "gpt2";
  int64_t layers = 2;
  int64_t hidden_size = 64;
  int64_t heads = 4;
  int64_t kv_heads = 0;           // 0: = heads
  int64_t intermediate_size = 0;  // 0: the architecture's default (4 x hidden)
  int64_t vocab_size = 1000;
  int64_t max_positions = 256;
  uint64_t seed = 0;
  double init_std = 0.02;
  // F32, or BF16: each float32 draw rounded to nearest even (half the bytes to write and
  // read, as the bfloat16 checkpoints a GPU run loads).
  io::DType storage = io::DType::kF32;
};

// Writes config.json and model.safetensors into `dir` (created if needed).
void writeRandomCheckpoint(const RandomCheckpointSpec& spec, const std::filesystem::path& dir);

// random-model's --out, checked before anything is written: absent or empty, or, with
// --force, a directory holding nothing but those two files (an earlier random model);
// anything else in it is the user's and is never replaced. InputError naming `dir`.
void checkRandomCheckpointOut(const std::filesystem::path& dir, bool force);

}  // namespace posgeom::model
