#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/jobs/check_job.h"

#include "posgeom/base/option_names.h"

namespace posgeom::cli {

void addCheckCommand(CLI::App& app, std::vector<Command>& commands, int& exit_code) {
  auto job = std::make_shared<jobs::CheckJob>();
  auto* sub = app.add_subcommand("check", "compare a report's numbers with reference numbers (exit 1 on a regression)");
  sub->add_option("report", job->report, "report directory or its summary.json")->required();
  sub->add_option(option::kReference, job->reference, "reference JSON: any subset of summary.json")->required();
  sub->add_option(option::kRtol, job->check.tolerance.rtol, "relative tolerance for floats")->capture_default_str();
  sub->add_option(option::kAtol, job->check.tolerance.atol, "absolute tolerance for floats")->capture_default_str();
  sub->add_option(option::kTolerance, job->per_key, "per-key override KEY=RTOL[,ATOL], e.g. relative_norm=1e-3");
  sub->add_flag(option::kAll, job->all, "list every number, not only the ones that moved");
  commands.push_back({sub, [job, &exit_code] {
                        const auto outcome = jobs::runCheckJob(*job);
                        std::cout << outcome.table;
                        if (!outcome.passed) exit_code = 1;
                      }});
}

}  // namespace posgeom::cli
