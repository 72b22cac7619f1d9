#pragma once
// A Hugging Face Hub on 127.0.0.1 for the hub tests (tests/support/local_hub.py, Python's
// standard library): the repositories a test lays out, the hub's headers and errors, a
// file store on another port, failures and throttling on demand, every request logged.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.h"

namespace posgeom::testing {

class LocalHub {
 public:
  static constexpr const char* kToken = "hf_local_test_token";
  // `repos`: name -> {"revisions": {rev: dir}, "gated": bool, "private": bool}; the
  // directories are copied under a scratch root (so a test may edit its own afterwards).
  explicit LocalHub(const nlohmann::json& repos);
  ~LocalHub();
  std::string endpoint() const { return endpoint_; }
  const std::filesystem::path& root() const { return root_.path(); }
  // What a posgeom (or huggingface_hub) process needs to use this hub with `cache`:
  // HF_ENDPOINT, HF_HUB_CACHE, HF_HUB_OFFLINE=0, and HF_TOKEN when `token` is given.
  Environment env(const std::filesystem::path& cache, const std::string& token = "") const;
  // control.json, read by the server at every request (see local_hub.py).
  void control(const nlohmann::json& settings) const;
  // Requests so far, "METHOD PATH range=... auth=...", and how many contain `part`.
  std::vector<std::string> requests() const;
  int count(const std::string& part) const;
  void clearRequests() const;

 private:
  ScratchDir root_;
  std::unique_ptr<RunningProgram> server_;
  std::string endpoint_;
};

// Runs posgeom with `env` set on top of the test's environment.
CommandResult runPosgeomWith(const std::vector<std::string>& args, const Environment& env);
// The Python of the pinned huggingface_hub (tools/hub-venv makes it); empty when absent.
std::filesystem::path hubPython();

}  // namespace posgeom::testing

// Skips (fails under CI=true) without tools/hub-venv's huggingface_hub.
#define POSGEOM_REQUIRE_HUB_PYTHON()                                                                        \
  do {                                                                                                      \
    if (::posgeom::testing::hubPython().empty()) {                                                          \
      if (::posgeom::testing::runningInCi()) FAIL() << "missing .venv-hub: tools/hub-venv makes it";       \
      GTEST_SKIP() << "needs huggingface_hub in .venv-hub (tools/hub-venv)";                                \
    }                                                                                                       \
  } while (0)

namespace posgeom::testing {
// The repos of a LocalHub holding one repository `name` with branch main at `dir`.
nlohmann::json oneRepo(const std::string& name, const std::filesystem::path& dir);
// The bundled default model's directory: a small complete model with a tokenizer.
std::filesystem::path defaultModelDir();
}  // namespace posgeom::testing
