#pragma once
// The token streams a model trains on: a text corpus as characters or bytes, or the
// paper's addition task generated from the seed. Every batch is a pure function of
// (seed, step), so runs are reproducible and resume exactly. Torch-free.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "posgeom/train/train_config.h"

namespace posgeom::train {

class TrainingData {
 public:
  virtual ~TrainingData() = default;
  virtual int64_t vocabSize() const = 0;
  // `batch` windows of `length` ids, row-major. Validation batches depend on `index` only.
  virtual std::vector<int64_t> batch(bool validation, int64_t batch, int64_t length, uint64_t seed, int64_t index) const = 0;
  // Each window's weights of its `length` - 1 targets (ids 1.. of the window) in the loss;
  // empty: every target alike.
  virtual std::vector<float> lossWeights(const std::vector<int64_t>& /*ids*/, int64_t /*batch*/, int64_t /*length*/) const {
    return {};
  }
  // tokenizer.json (and nothing else) for the model directory.
  virtual nlohmann::json tokenizerJson() const = 0;
  // Sizes and the unigram baseline: the validation split's cross-entropy (nats/token)
  // under the training split's token frequencies.
  virtual nlohmann::json describe() const = 0;
};

std::unique_ptr<TrainingData> openTrainingData(const DataSpec& spec);

// How the addition task writes its problems (DataSpec's reverse_sum and carries).
struct AdditionFormat {
  bool reverse_sum = false;
  bool carries = true;
};
AdditionFormat additionFormat(const DataSpec& spec);
// What a trained model's train_config.json records (the defaults without one).
AdditionFormat trainedAdditionFormat(const std::filesystem::path& model_dir);

// One addition problem as the model sees it: "a+b=c\n", c's digits reversed with reverse_sum.
std::string additionProblem(uint64_t a, uint64_t b, const AdditionFormat& format = {});
// Weights 1 on the targets that are an answer's tokens (after a "=", up to and with its
// "\n"), 0 elsewhere and where a window begins inside a problem not yet known.
std::vector<float> answerWeights(const std::vector<int64_t>& ids, int64_t batch, int64_t length);
// A random operand with exactly `digits` digits.
uint64_t randomOperand(uint64_t& state, int64_t digits);
// Operands of exactly `a_digits` and `b_digits` digits; without carries every digit column
// sums below 10 (a drawn again where its digit leaves b's leading digit no room).
std::pair<uint64_t, uint64_t> randomOperands(uint64_t& state, int64_t a_digits, int64_t b_digits, bool carries);
// SplitMix64: the generator behind every batch.
uint64_t splitMix(uint64_t& state);

}  // namespace posgeom::train
