#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/jobs/batch_job.h"

#include "posgeom/base/option_names.h"

namespace posgeom::cli {
namespace {

// The options a sweep's tables may set: analyze's own, from its command line.
jobs::OptionCatalog analyzeOptionCatalog() {
  CLI::App app;
  std::vector<Command> commands;
  addAnalyzeCommand(app, commands);
  jobs::OptionCatalog catalog;
  for (const auto* option : app.get_subcommand("analyze")->get_options())
    for (const auto& name : option->get_lnames())
      if (name != "help") catalog[name] = option->get_expected_max() == 0;  // a flag takes no value
  return catalog;
}

}  // namespace

void addBatchCommand(CLI::App& app, std::vector<Command>& commands, int& exit_code) {
  auto job = std::make_shared<jobs::BatchJob>();
  auto* sub = app.add_subcommand("batch", "run a sweep of analyses from a config (models x corpora x variants) into one table");
  sub->add_option("config", job->config, "sweep file, e.g. configs/paper-table1.toml")->required();
  sub->add_option(option::kOut, job->out, "output directory (default: the config's `out`)")
      ->check([](const std::string& out) { return out.empty() ? std::string("is empty: name the directory the sweep writes into") : ""; });
  sub->add_flag(option::kForce, job->force,
                "run again the runs that already have a report (without it, a sweep run again keeps them)");
  sub->add_option(option::kDistInit, job->dist_init,
                  "under torchrun or srun: where the ranks meet (as analyze's); each run runs over all ranks")
      ->capture_default_str();
  sub->add_option(option::kDistTimeout, job->dist_timeout_s,
                  "seconds a rank waits for the others; covers rank 0's report of the run before")
      ->capture_default_str();
  commands.push_back({sub, [job, &exit_code] {
                        job->analyze_options = analyzeOptionCatalog();
                        const auto summary = jobs::runBatchJob(*job, [&](const jobs::SweepRun& run) {
                          return analyzeOptionsFrom(run.options, job->config.string() + ": run " + run.name);
                        });
                        if (!summary.allPassed()) exit_code = 1;
                        if (summary.reporting) std::cout << summary.line() << "\n";
                      }});
  commands.back().runs_model = true;
}

}  // namespace posgeom::cli
