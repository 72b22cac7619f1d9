#pragma once
// Each subcommand registers its options on the app and returns what to run once parsed.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "posgeom/pass/options.h"

namespace posgeom::cli {

struct Command {
  CLI::App* app;
  std::function<void()> run;
  bool runs_model = false;  // a forward pass: worth restarting for the thread settings
};

void addAnalyzeCommand(CLI::App& app, std::vector<Command>& commands);
// `analyze`'s options as given in a sweep, parsed exactly as on the command line;
// a bad option is an InputError naming `where`.
pass::AnalyzeOptions analyzeOptionsFrom(const std::vector<std::pair<std::string, std::string>>& options,
                                        const std::string& where);
// `batch` sets exit_code to 1 when a run was skipped, failed or moved from its reference.
void addBatchCommand(CLI::App& app, std::vector<Command>& commands, int& exit_code);
void addBenchCommand(CLI::App& app, std::vector<Command>& commands);
// `check` sets exit_code to 1 when a number moved.
void addCheckCommand(CLI::App& app, std::vector<Command>& commands, int& exit_code);
void addDownloadCommand(CLI::App& app, std::vector<Command>& commands);
void addForwardCommand(CLI::App& app, std::vector<Command>& commands);
void addInspectCommand(CLI::App& app, std::vector<Command>& commands);
void addRandomModelCommand(CLI::App& app, std::vector<Command>& commands);
void addTokenizeCommand(CLI::App& app, std::vector<Command>& commands);
// `train` and `eval-addition`.
void addTrainCommands(CLI::App& app, std::vector<Command>& commands);

}  // namespace posgeom::cli
