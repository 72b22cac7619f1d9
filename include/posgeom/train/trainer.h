#pragma once
// `posgeom train`: trains a GPT-2-architecture language model with AdamW on the CPU (or a
// GPU) and writes it in Hugging Face layout, so that analyze, forward and inspect load it
// like any checkpoint. Torch-free header.
#include <cstdint>
#include <string>
#include <vector>

#include "posgeom/train/train_config.h"

namespace posgeom::train {

struct TrainOptions {
  bool resume = false;       // continue from <out>/checkpoint.safetensors
  std::string device = "cpu";
  int64_t stop_after = 0;    // > 0: stop (with a checkpoint) after this many steps, schedule unchanged
};

// One line of train_log.csv.
struct LogRow {
  int64_t step = 0;
  double learning_rate = 0;
  double train_loss = 0;
  double validation_loss = -1;  // -1: not evaluated at this step
};

// Writes into config.run.out: config.json, model.safetensors, tokenizer.json (the model),
// train_config.json (the effective config), train_log.csv, training.json (data, baseline,
// final losses, time) and checkpoint.safetensors (to resume). Returns the log.
std::vector<LogRow> runTraining(const TrainConfig& config, const TrainOptions& options);

}  // namespace posgeom::train
