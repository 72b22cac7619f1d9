#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "commands.h"
#include "config_file.h"
#include "posgeom/base/error.h"
#include "posgeom/model/runtime.h"

namespace {

void setUpLogging(const std::string& level) {
  auto logger = spdlog::stderr_color_mt("posgeom");
  logger->set_pattern("posgeom: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace

int main(int argc, char** argv) {
  using posgeom::ExitCode;
  CLI::App app{"posgeom: positional geometry of Transformer language models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", POSGEOM_VERSION);
  int threads = 0;
  std::string log_level = "info";
  app.add_option("--threads", threads, "intra-op threads (0: all cores)")->check(CLI::NonNegativeNumber);
  bool quiet = false;
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_flag("--quiet,-q", quiet, "warnings and errors only: no progress, no info lines (same as --log-level warn)");

  posgeom::cli::addConfigOption(app, argc, argv);
  std::vector<posgeom::cli::Command> commands;
  int exit_code = static_cast<int>(ExitCode::kOk);
  posgeom::cli::addAnalyzeCommand(app, commands);
  posgeom::cli::addBatchCommand(app, commands, exit_code);
  posgeom::cli::addCheckCommand(app, commands, exit_code);
  posgeom::cli::addForwardCommand(app, commands);
  posgeom::cli::addInspectCommand(app, commands);
  posgeom::cli::addRandomModelCommand(app, commands);
  posgeom::cli::addTokenizeCommand(app, commands);
  posgeom::cli::addTrainCommands(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kBadInput);
  }
  setUpLogging(quiet && log_level == "info" ? "warn" : log_level);
  try {
    posgeom::model::configureThreads(threads);
    posgeom::model::warnIfReferenceBlas();
    for (const auto& command : commands)
      if (command.app->parsed()) command.run();
  } catch (const posgeom::InputError& e) {
    std::cerr << "posgeom: error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const std::exception& e) {
    // Internal failures keep only the first line: LibTorch appends a stack trace.
    const std::string what = e.what();
    std::cerr << "posgeom: internal error: " << what.substr(0, what.find('\n')) << "\n";
    return static_cast<int>(ExitCode::kInternal);
  }
  return exit_code;
}
