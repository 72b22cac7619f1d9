#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "config_file.h"
#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/runtime/rank_group.h"
#include "posgeom/runtime/threads.h"

namespace {

// One line and the exit code; as one rank of several, the others are told first why
// this one stops.
int failed(posgeom::ExitCode code, const std::string& kind, const std::string& message) {
  std::cerr << "posgeom: " << kind << ": " << message << "\n";
  posgeom::runtime::announceFailureToRanks(static_cast<int>(code), message);
  return static_cast<int>(code);
}

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
  app.set_version_flag(posgeom::option::kVersion, POSGEOM_VERSION);
  int threads = 0;
  std::string log_level = "info";
  app.add_option(posgeom::option::kThreads, threads, "intra-op threads (0: all cores)")->check(CLI::NonNegativeNumber);
  bool quiet = false;
  app.add_option(posgeom::option::kLogLevel, log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_flag("--quiet,-q", quiet, "warnings and errors only: no progress, no info lines (same as --log-level warn)");

  posgeom::cli::addConfigOption(app, argc, argv);
  std::vector<posgeom::cli::Command> commands;
  int exit_code = static_cast<int>(ExitCode::kOk);
  posgeom::cli::addAnalyzeCommand(app, commands);
  posgeom::cli::addBatchCommand(app, commands, exit_code);
  posgeom::cli::addBenchCommand(app, commands);
  posgeom::cli::addCheckCommand(app, commands, exit_code);
  posgeom::cli::addForwardCommand(app, commands);
  posgeom::cli::addInspectCommand(app, commands);
  posgeom::cli::addRandomModelCommand(app, commands);
  posgeom::cli::addTokenizeCommand(app, commands);
  posgeom::cli::addDownloadCommand(app, commands);
  posgeom::cli::addTrainCommands(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "posgeom: error: " << e.what() << " (see --help)\n";
    return static_cast<int>(ExitCode::kBadInput);
  }
  for (const auto& command : commands)
    if (command.app->parsed() && command.runs_model) posgeom::runtime::restartWithThreadSettings(argv);
  setUpLogging(quiet && log_level == "info" ? "warn" : log_level);
  // A file-size limit then fails the write (reported, temporary file removed) instead of
  // killing the process with a half-written file.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    const int threads_used = posgeom::runtime::configureThreads(threads);
    spdlog::debug("{} intra-op threads; {}", threads_used, posgeom::runtime::describeThreadSettings());
    posgeom::runtime::warnIfReferenceBlas();
    for (const auto& command : commands)
      if (command.app->parsed()) command.run();
  } catch (const posgeom::RunStopped& e) {
    std::cerr << "posgeom: stopped: " << e.what() << "\n";
    return e.exitCode();
  } catch (const posgeom::runtime::RankFailed& e) {
    // Another rank of a distributed run failed or was lost: this one says which, and stops.
    std::cerr << "posgeom: error: " << e.what() << "\n";
    return e.exitCode();
  } catch (const posgeom::InputError& e) {
    return failed(ExitCode::kBadInput, "error", e.what());
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that the system cannot resolve (a symlink loop, a name too long):
    // bad input naming it, not an internal error.
    return failed(ExitCode::kBadInput, "error",
                  (e.path1().empty() ? std::string("path") : e.path1().string()) + ": " + e.code().message());
  } catch (const std::exception& e) {
    // Internal failures keep only the first line: LibTorch appends a stack trace.
    const std::string what = e.what();
    return failed(ExitCode::kInternal, "internal error", what.substr(0, what.find('\n')));
  }
  return exit_code;
}
