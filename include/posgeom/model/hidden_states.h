#pragma once
// Every hidden state of a model for given ids (and the final norm and logits where the
// model has them), as float32 tensors (float64 in a float64 run) in one safetensors file: what `forward` writes.
// Torch-free header.
#include <cstdint>
#include <filesystem>
#include <string>

#include "posgeom/io/safetensors_writer.h"
#include "posgeom/runtime/device.h"

namespace posgeom::model {

struct HiddenStatesRequest {
  std::filesystem::path model_dir;
  std::filesystem::path ids_path;   // safetensors with int64 `input_ids` [B,T]; empty:
  int64_t random_batch = 0;         // uniform random ids [random_batch, random_len] (--random-ids)
  int64_t random_len = 0;
  uint64_t seed = 0;
  std::filesystem::path out_path;   // safetensors: float32 (float64) hidden.<l>, final_norm, logits
  runtime::ComputeDtype dtype = runtime::ComputeDtype::kFloat32;
  runtime::DeviceSpec device;
  bool causal = false;              // force the causal mask on a bidirectional model
  bool final_norm_last = false;     // apply the final norm to the last hidden state, as HF does
  bool logits = true;               // false: leave out the logits ([B,T,vocab]: most of the file)
};

// Runs the model over the ids a few sequences at a time (with a progress line) and adds
// what forward writes to `writer`; returns what was added, for the log line. InputError,
// before anything large is allocated, for ids the model cannot take or outputs larger
// than the memory free; and, with nothing added, for a hidden state (or final norm or
// logits) that is NaN or Inf.
std::string collectHiddenStates(const HiddenStatesRequest& request, io::SafetensorsWriter& writer);
// collectHiddenStates, then writes request.out_path.
void writeHiddenStates(const HiddenStatesRequest& request);

}  // namespace posgeom::model
