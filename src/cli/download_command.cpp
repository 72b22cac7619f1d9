#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/base/option_names.h"
#include "posgeom/jobs/download_job.h"

namespace posgeom::cli {

void addDownloadCommand(CLI::App& app, std::vector<Command>& commands) {
  auto job = std::make_shared<jobs::DownloadJob>();
  auto* sub = app.add_subcommand("download", "fetch a model from the Hugging Face Hub into its cache; prints the snapshot's path");
  sub->add_option("model", job->model, "hub name, e.g. meta-llama/Llama-3.1-8B")->required();
  sub->add_option(option::kRevision, job->revision, "branch, tag or commit (default main)");
  sub->add_option("--include", job->include,
                  "only the files matching this glob (repeatable; default: the config, tokenizer and weights posgeom reads)");
  commands.push_back({sub, [job] { std::cout << jobs::runDownloadJob(*job).string() << std::endl; }});
}

}  // namespace posgeom::cli
