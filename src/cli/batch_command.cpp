#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/pipeline/batch_job.h"

namespace posgeom::cli {

void addBatchCommand(CLI::App& app, std::vector<Command>& commands, int& exit_code) {
  struct Options {
    std::filesystem::path config;
    std::filesystem::path out;
    bool force = false;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("batch", "run a sweep of analyses from a config (models x corpora x variants) into one table");
  sub->add_option("config", opt->config, "sweep file, e.g. configs/paper-table1.toml")->required();
  sub->add_option("--out", opt->out, "output directory (default: the config's `out`)");
  sub->add_flag("--force", opt->force, "write into run directories that are not empty (a sweep run again)");
  commands.push_back({sub, [opt, &exit_code] {
                        auto sweep = pipeline::readSweep(opt->config);
                        if (!opt->out.empty()) sweep.out = opt->out;
                        auto make_job = [&](const pipeline::SweepRun& run) {
                          auto job = analyzeJobFromOptions(run.options, opt->config.string() + ": run " + run.name);
                          job.force = opt->force;
                          return job;
                        };
                        for (const auto& run : sweep.runs) make_job(run);  // a misspelt option fails before any run
                        const auto outcomes = pipeline::runSweep(sweep, make_job);
                        std::size_t ok = 0;
                        for (const auto& o : outcomes) {
                          ok += o.status == "ok" && o.check_passed.value_or(true);
                          if (o.status != "ok" || !o.check_passed.value_or(true)) exit_code = 1;
                        }
                        std::cout << ok << " of " << outcomes.size() << " runs completed" << (ok < outcomes.size() ? " (see " : " in ")
                                  << (sweep.out / "table.md").string() << (ok < outcomes.size() ? ")" : "") << "\n";
                      }});
  commands.back().runs_model = true;
}

}  // namespace posgeom::cli
