#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/jobs/batch_job.h"

namespace posgeom::cli {

void addBatchCommand(CLI::App& app, std::vector<Command>& commands, int& exit_code) {
  auto job = std::make_shared<jobs::BatchJob>();
  auto* sub = app.add_subcommand("batch", "run a sweep of analyses from a config (models x corpora x variants) into one table");
  sub->add_option("config", job->config, "sweep file, e.g. configs/paper-table1.toml")->required();
  sub->add_option("--out", job->out, "output directory (default: the config's `out`)");
  sub->add_flag("--force", job->force,
                "run again the runs that already have a report (without it, a sweep run again keeps them)");
  sub->add_option("--dist-init", job->dist_init,
                  "under torchrun or srun: where the ranks meet (as analyze's); each run runs over all ranks")
      ->capture_default_str();
  sub->add_option("--dist-timeout", job->dist_timeout_s,
                  "seconds a rank waits for the others; covers rank 0's report of the run before")
      ->capture_default_str();
  commands.push_back({sub, [job, &exit_code] {
                        const auto summary = jobs::runBatchJob(*job, [&](const jobs::SweepRun& run) {
                          return analyzeOptionsFrom(run.options, job->config.string() + ": run " + run.name);
                        });
                        if (!summary.allPassed()) exit_code = 1;
                        if (summary.reporting) std::cout << summary.line() << "\n";
                      }});
  commands.back().runs_model = true;
}

}  // namespace posgeom::cli
