#pragma once
// `posgeom check`: a report's numbers against a reference, for CI. Torch-free.
#include <string>
#include <vector>

#include "posgeom/report/check.h"

namespace posgeom::jobs {

struct CheckJob {
  std::string report;                 // report directory or its summary.json
  std::string reference;              // reference JSON: any subset of summary.json
  report::CheckOptions check;
  std::vector<std::string> per_key;   // KEY=RTOL[,ATOL]
  bool all = false;                   // every number in the table, not only the moved ones
};

struct CheckOutcome {
  std::string table;
  bool passed = true;
};

CheckOutcome runCheckJob(const CheckJob& job);

}  // namespace posgeom::jobs
