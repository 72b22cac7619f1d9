#pragma once
// `posgeom train`: trains a GPT-2-architecture model with AdamW on the CPU (or a
// GPU) and writes it in Hugging Face layout, so that analyze, forward and inspect load it
// like any checkpoint. Torch-free header.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/runtime/device.h"
#include "posgeom/train/train_config.h"
#include "posgeom/train/training_log.h"

namespace posgeom::train {

struct TrainOptions {
  bool resume = false;       // continue from <out>/checkpoint.safetensors
  bool force = false;        // replace the training run in <out> (never a directory holding anything else)
  runtime::DeviceSpec device;  // cpu by default
  int64_t stop_after = 0;    // > 0: stop (with a checkpoint) after this many steps, schedule unchanged
};

// One line of train_log.csv.
// The validation loss of the last step evaluated; none before the first evaluation.
std::optional<double> lastValidationLoss(const std::vector<LogRow>& log);

// Writes into config.run.out (see RunDirectory for what it may write over): config.json,
// model.safetensors, tokenizer.json (the model), train_config.json (the effective
// config), train_log.csv, training.json (data, baseline, final losses, time) and
// checkpoint.safetensors (to resume). Returns the log. Before anything is allocated or
// written: the memory estimate, the --out policy, and with resume the checkpoint's
// identity (config, every byte of the corpus, schedule, threads) and a --stop-after past
// its step. SIGINT/SIGTERM stop it after the
// step in hand with a checkpoint (RunStopped).
std::vector<LogRow> runTraining(const TrainConfig& config, const TrainOptions& options);

}  // namespace posgeom::train
