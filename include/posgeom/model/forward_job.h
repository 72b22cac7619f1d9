#pragma once
// `posgeom forward`: ids in, every hidden state (and final norm, logits) out. Torch-free.
#include <filesystem>
#include <string>

namespace posgeom::model {

struct ForwardJob {
  std::string model;                // directory or hub name
  std::filesystem::path ids_path;   // safetensors with int64 `input_ids` [B,T]; or
  int64_t random_batch = 0;         // > 0: uniform random ids [random_batch, random_len]
  int64_t random_len = 0;
  uint64_t seed = 0;
  std::filesystem::path out_path;   // safetensors: float32 hidden.<l>, final_norm, logits
  std::string dtype = "float32";
  std::string device = "cpu";
  bool causal = false;              // force the causal mask on a bidirectional model
  bool final_norm_last = false;     // apply the final norm to the last hidden state, as HF does
};

void runForwardJob(const ForwardJob& job);

}  // namespace posgeom::model
