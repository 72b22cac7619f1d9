#pragma once
// `--config FILE`: options from TOML (CLI11's reader) or JSON (an object of option names
// to values); the command line wins.
#include <CLI/CLI.hpp>

namespace posgeom::cli {

// Keys outside any section belong to `subcommand` (the one being run).
class TomlOrJsonConfig final : public CLI::ConfigBase {
 public:
  explicit TomlOrJsonConfig(std::string subcommand) : subcommand_(std::move(subcommand)) {}
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

 private:
  std::string subcommand_;
};

// Adds `posgeom SUBCOMMAND --config FILE`. CLI11 reads config files at the top level only,
// so --config lives on the app (reached from the subcommand by fall-through) and the
// subcommand named on the command line owns the file's keys.
void addConfigOption(CLI::App& app, int argc, char** argv);

}  // namespace posgeom::cli
