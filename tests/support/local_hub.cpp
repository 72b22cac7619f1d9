#include "local_hub.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace posgeom::testing {
namespace fs = std::filesystem;

LocalHub::LocalHub(const nlohmann::json& repos) {
  nlohmann::json specs = nlohmann::json::object();
  int n = 0;
  for (const auto& [name, spec] : repos.items()) {
    nlohmann::json copy = spec;
    for (const auto& [rev, dir] : spec.at("revisions").items()) {
      const std::string folder = "repo" + std::to_string(n++);
      fs::copy(dir.get<std::string>(), root_ / folder, fs::copy_options::recursive);
      copy["revisions"][rev] = folder;
    }
    specs[name] = copy;
  }
  writeFile(root_ / "repos.json", specs.dump(2));
  const auto port_file = root_ / "port";
  server_ = std::make_unique<RunningProgram>(
      "/usr/bin/python3",
      std::vector<std::string>{fs::path(POSGEOM_SOURCE_DIR) / "tests" / "support" / "local_hub.py", (root_ / "repos.json").string(),
                               "--token", kToken, "--port-file", port_file.string()});
  for (int i = 0; i < 300 && !fs::exists(port_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!fs::exists(port_file)) throw std::runtime_error("the local hub did not start: " + server_->wait().err);
  endpoint_ = "http://127.0.0.1:" + readFile(port_file);
}

LocalHub::~LocalHub() = default;

Environment LocalHub::env(const fs::path& cache, const std::string& token) const {
  Environment e{{"HF_ENDPOINT", endpoint_}, {"HF_HUB_CACHE", cache.string()}, {"HF_HUB_OFFLINE", "0"}};
  if (!token.empty()) e.emplace_back("HF_TOKEN", token);
  return e;
}

void LocalHub::control(const nlohmann::json& settings) const {
  writeFile(root_ / "control.json.tmp", settings.dump());
  fs::rename(root_ / "control.json.tmp", root_ / "control.json");
}

std::vector<std::string> LocalHub::requests() const {
  std::vector<std::string> lines;
  std::istringstream in(fs::exists(root_ / "requests.log") ? readFile(root_ / "requests.log") : "");
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int LocalHub::count(const std::string& part) const {
  int n = 0;
  for (const auto& line : requests()) n += line.find(part) != std::string::npos;
  return n;
}

void LocalHub::clearRequests() const { fs::remove(root_ / "requests.log"); }

CommandResult runPosgeomWith(const std::vector<std::string>& args, const Environment& env) {
  return RunningProgram(POSGEOM_BINARY, args, "", env).wait();
}

fs::path hubPython() {
  const fs::path python = fs::path(POSGEOM_SOURCE_DIR) / ".venv-hub" / "bin" / "python";
  return fs::exists(python) ? python : fs::path();
}

}  // namespace posgeom::testing

namespace posgeom::testing {

nlohmann::json oneRepo(const std::string& name, const std::filesystem::path& dir) {
  return {{name, {{"revisions", {{"main", dir.string()}}}}}};
}

std::filesystem::path defaultModelDir() { return std::filesystem::path(POSGEOM_SOURCE_DIR) / "models" / "default"; }

}  // namespace posgeom::testing
