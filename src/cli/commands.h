#pragma once
// Each subcommand registers its options on the app and returns what to run once parsed.
#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace posgeom::cli {

struct Command {
  CLI::App* app;
  std::function<void()> run;
};

void addAnalyzeCommand(CLI::App& app, std::vector<Command>& commands);
// `check` sets exit_code to 1 when a number moved.
void addCheckCommand(CLI::App& app, std::vector<Command>& commands, int& exit_code);
void addForwardCommand(CLI::App& app, std::vector<Command>& commands);
void addInspectCommand(CLI::App& app, std::vector<Command>& commands);
void addRandomModelCommand(CLI::App& app, std::vector<Command>& commands);
void addTokenizeCommand(CLI::App& app, std::vector<Command>& commands);

}  // namespace posgeom::cli
