#include "posgeom/base/option_names.h"
#include "config_file.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace posgeom::cli {

std::vector<CLI::ConfigItem> TomlOrJsonConfig::from_config(std::istream& input) const {
  std::stringstream buffer;
  buffer << input.rdbuf();
  const std::string text = buffer.str();
  const auto first = text.find_first_not_of(" \t\r\n");
  auto owned = [this](std::vector<CLI::ConfigItem> items) {
    for (auto& item : items)
      if (item.parents.empty() && !subcommand_.empty()) item.parents = {subcommand_};
    return items;
  };
  if (first == std::string::npos || text[first] != '{') {
    std::istringstream toml(text);
    return owned(CLI::ConfigBase::from_config(toml));
  }
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) throw CLI::ConversionError("config", "not a valid JSON object");
  std::vector<CLI::ConfigItem> items;
  for (const auto& [key, value] : json.items()) {
    CLI::ConfigItem item;
    item.name = key;
    auto text_of = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    if (value.is_array()) {
      for (const auto& v : value) item.inputs.push_back(text_of(v));
    } else {
      item.inputs.push_back(text_of(value));
    }
    items.push_back(std::move(item));
  }
  return owned(std::move(items));
}

void addConfigOption(CLI::App& app, int argc, char** argv) {
  std::string subcommand;
  for (int i = 1; i < argc && subcommand.empty(); ++i)
    if (argv[i][0] != '-' && (i == 1 || std::string(argv[i - 1]).rfind("--", 0) != 0 || std::string(argv[i - 1]).find('=') != std::string::npos))
      subcommand = argv[i];
  app.fallthrough();
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.config_formatter(std::make_shared<TomlOrJsonConfig>(subcommand));
  app.set_config(option::kConfig, "", "TOML or JSON file of a subcommand's options (names without --); the command line wins");
}

}  // namespace posgeom::cli
