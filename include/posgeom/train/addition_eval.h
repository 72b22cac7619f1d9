#pragma once
// `posgeom eval-addition`: exact-match accuracy of a model trained on the addition task,
// by operand length, including lengths beyond those it was trained on (the paper's
// length-generalisation failure). Torch-free header.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "posgeom/runtime/device.h"

namespace posgeom::train {

struct AdditionAccuracy {
  int64_t digits = 0;   // both operands have this many digits
  int64_t samples = 0;
  int64_t correct = 0;
  double accuracy() const { return samples ? static_cast<double>(correct) / static_cast<double>(samples) : 0; }
};

// Greedy decoding of "\na+b=" for `samples` random problems per length 1..max_digits.
std::vector<AdditionAccuracy> evaluateAddition(const std::filesystem::path& model_dir, int64_t max_digits, int64_t samples,
                                               uint64_t seed, const runtime::DeviceSpec& device);

// The rows as an aligned table ("digits  accuracy") and as CSV (digits,samples,correct,accuracy).
std::string additionTable(const std::vector<AdditionAccuracy>& rows);
std::string additionCsv(const std::vector<AdditionAccuracy>& rows);

}  // namespace posgeom::train
