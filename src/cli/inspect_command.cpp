#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/jobs/inspect_job.h"

#include "posgeom/base/option_names.h"

namespace posgeom::cli {

void addInspectCommand(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    std::string model;
    std::string revision;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("inspect", "describe a model directory or hub name without running it");
  sub->add_option(option::kModel, opt->model, "model directory or Hugging Face hub name")->required();
  sub->add_option(option::kRevision, opt->revision, "of a hub name: branch, tag or commit (default main), from the Hugging Face cache or the hub");
  sub->add_flag(option::kJson, opt->json, "print JSON instead of text");
  commands.push_back({sub, [opt] {
                        const auto info = jobs::inspectModel(opt->model, opt->revision);
                        std::cout << (opt->json ? info.dump(2) + "\n" : jobs::formatInspection(info));
                      }});
}

}  // namespace posgeom::cli
