#pragma once
// `posgeom train`: the config read, the command line's overrides applied, the run trained
// and one line saying where it went. Torch-free.
#include <cstdint>
#include <filesystem>
#include <iosfwd>

#include "posgeom/train/trainer.h"

namespace posgeom::jobs {

struct TrainJob {
  std::filesystem::path config;  // TOML or JSON: [model], [data], [optim], [run]
  std::filesystem::path out;     // empty: the config's run.out
  int64_t iterations = 0;        // > 0: overrides optim.iterations
  int64_t save_every = -1;       // >= 0: overrides run.save_every
  train::TrainOptions options;
};

// Writes "trained N steps into OUT (...)" to `out` once the run is done.
void runTrainJob(const TrainJob& job, std::ostream& out);

}  // namespace posgeom::jobs
