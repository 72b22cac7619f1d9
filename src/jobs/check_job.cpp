#include "posgeom/jobs/check_job.h"

#include <filesystem>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/io/json_file.h"
#include "posgeom/report/run_summary.h"

namespace posgeom::jobs {
namespace {

// KEY=RTOL[,ATOL]; ATOL defaults to `base`'s.
std::pair<std::string, report::Tolerance> parsePerKey(const std::string& spec, const report::Tolerance& base) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos) throw InputError(option::kTolerance, "'" + spec + "' is not KEY=RTOL[,ATOL]");
  report::Tolerance t = base;
  const auto comma = spec.find(',', eq);
  try {
    t.rtol = std::stod(spec.substr(eq + 1, comma - eq - 1));
    if (comma != std::string::npos) t.atol = std::stod(spec.substr(comma + 1));
  } catch (const std::exception&) {
    throw InputError(option::kTolerance, "'" + spec + "' is not KEY=RTOL[,ATOL]");
  }
  return {spec.substr(0, eq), t};
}

}  // namespace

CheckOutcome runCheckJob(const CheckJob& job) {
  auto options = job.check;
  for (const auto& spec : job.per_key) {
    const auto [key, tolerance] = parsePerKey(spec, job.check.tolerance);
    options.per_key[key] = tolerance;
  }
  std::filesystem::path summary = job.report;
  if (std::filesystem::is_directory(summary)) summary /= report::keys::kSummaryFile;
  const auto rows = report::checkAgainstReference(report::RunSummary::read(summary).json(), io::readJsonFile(job.reference), options,
                                                  job.reference);
  if (rows.empty()) throw InputError(job.reference, "holds no values to check");
  CheckOutcome outcome;
  outcome.table = report::formatCheck(rows, job.all);
  for (const auto& r : rows) outcome.passed = outcome.passed && r.ok;
  return outcome;
}

}  // namespace posgeom::jobs
