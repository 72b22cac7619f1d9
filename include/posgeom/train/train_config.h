#pragma once
// What `posgeom train --config FILE` trains: a GPT-2-architecture language model on a
// text corpus (character or byte tokens) or on the paper's addition task. Torch-free.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace posgeom::train {

struct ModelShape {
  int64_t layers = 6;
  int64_t heads = 6;
  int64_t width = 384;
  int64_t context = 128;             // training window; also the model's positions unless `positions` says more
  int64_t positions = 0;             // learned position table size (0: = context)
  double dropout = 0.0;
  bool bias = true;                  // false: biases stay zero and are not trained
  std::string position_encoding = "learned";  // learned, none, alibi
};

struct DataSpec {
  std::string task = "text";          // text, or addition
  std::filesystem::path corpus;       // text: a file, directory or pattern
  std::string tokens = "char";        // text: char (the corpus' characters) or bytes (256 byte-level tokens)
  double validation_fraction = 0.1;   // text: the last part of the corpus
  int64_t digits = 10;                // addition: operands of min_digits..digits digits
  int64_t min_digits = 1;
  bool reverse_sum = false;           // addition: the sum's digits least significant first (the paper's)
  bool carries = true;                // addition: false keeps every digit column's sum below 10
  bool answer_loss = false;           // addition: the loss on the answers' tokens only (the sums and their "\n")
  // addition: "stream" packs problems into every window at random offsets; "problem" puts
  // one problem at the start of each window ("\n" then "a+b=c\n", padded with "\n"), the
  // layout eval-addition prompts in, so position k always means the same place in a sum.
  std::string window = "stream";
  // The paper's randomisation experiment: 1 replaces the second half of every training
  // window with uniform random ids (inputs and targets alike), 2 the whole window; 0 none.
  // Validation windows stay as they are.
  int64_t noise = 0;
};

struct OptimizerSpec {
  int64_t iterations = 5000;
  int64_t batch_size = 64;
  double learning_rate = 1e-3;
  double min_learning_rate = 1e-4;
  int64_t warmup = 100;
  std::string decay = "cosine";       // cosine, linear or constant after the warm-up
  double weight_decay = 0.1;          // AdamW, on matrices and embeddings only
  double beta1 = 0.9;
  double beta2 = 0.99;
  double grad_clip = 1.0;             // global norm; 0: none
};

struct RunSpec {
  uint64_t seed = 1337;
  int64_t eval_interval = 250;
  int64_t eval_batches = 20;
  int64_t checkpoint_interval = 500;
  // > 0: the model also in <out>/step_<k>/ (Hugging Face layout) at steps k = N, 2N, ...,
  // a series that `batch` analyses by step. It does not change the training curve.
  int64_t save_every = 0;
  std::filesystem::path out = "posgeom-train";
};

struct TrainConfig {
  ModelShape model;
  DataSpec data;
  OptimizerSpec optim;
  RunSpec run;
  std::filesystem::path source;  // the file it was read from, for messages (empty: built in code)
  nlohmann::json toJson() const;  // the effective config, written beside the model
};

// TOML or JSON with [model], [data], [optim], [run] tables; relative paths are relative
// to the file. Unknown keys and bad values are InputErrors naming the file: every float
// must be finite, beta1 and beta2 in [0, 1), min_learning_rate at most learning_rate.
TrainConfig readTrainConfig(const std::filesystem::path& path);

// The learning rate at step `step` (0-based): linear warm-up, then the decay.
double learningRate(const OptimizerSpec& o, int64_t step);

}  // namespace posgeom::train
