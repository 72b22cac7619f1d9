#pragma once
// `posgeom eval-addition`: an addition model's exact-match accuracy by operand length, as
// a table on the output stream and, with `out`, as CSV. Torch-free.
#include <cstdint>
#include <filesystem>
#include <iosfwd>

#include "posgeom/runtime/device.h"

namespace posgeom::jobs {

struct EvalAdditionJob {
  std::filesystem::path model;  // trained with [data] task = "addition"
  int64_t max_digits = 12;      // operand lengths 1..max_digits
  int64_t samples = 200;        // problems per length
  uint64_t seed = 7;
  runtime::DeviceSpec device;   // cpu by default
  std::filesystem::path out;    // also the table as CSV here (empty: none)
  bool force = false;           // replace `out` (never the model)
};

void runEvalAdditionJob(const EvalAdditionJob& job, std::ostream& table);

}  // namespace posgeom::jobs
