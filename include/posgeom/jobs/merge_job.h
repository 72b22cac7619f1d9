#pragma once
// `posgeom merge`: state files of shards into the report one run over all windows gives.
// Torch-free.
#include <filesystem>
#include <string>
#include <vector>

#include "posgeom/anova/layer_statistics.h"
#include "posgeom/pass/options.h"

namespace posgeom::jobs {

struct MergeJob {
  std::vector<std::filesystem::path> states;
  std::filesystem::path out = "posgeom-report";
  pass::ReportOptions report;
  anova::SampleCaps caps;
  std::string model;  // with states made by --heads: the model, to analyse the heads again
  bool force = false;
  bool partial = false;  // merge stopped states and an incomplete split, recorded as partial
};

void runMergeJob(const MergeJob& job);

}  // namespace posgeom::jobs
