#include "browser.h"

#include <cstdlib>

#include "test_support.h"

namespace posgeom::testing {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> commonFlags(int width, int height) {
  // --no-sandbox: CI runs as root; the rest keep a container quiet and deterministic.
  return {"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run", "--disable-extensions",
          "--mute-audio", "--window-size=" + std::to_string(width) + "," + std::to_string(height)};
}

}  // namespace

std::string chromiumBinary() {
  if (const char* env = std::getenv("POSGEOM_CHROMIUM"); env && *env) return env;
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(candidate)) return candidate;
  return "";
}

std::string dumpDom(const fs::path& page, int width, int height) {
  auto args = commonFlags(width, height);
  args.push_back("--virtual-time-budget=5000");
  args.push_back("--dump-dom");
  args.push_back("file://" + fs::absolute(page).string());
  const auto r = runProgram(chromiumBinary(), args);
  if (r.exit_code != 0) ADD_FAILURE() << "chromium --dump-dom failed: " << r.err;
  return r.out;
}

std::string screenshot(const fs::path& page, int width, int height) {
  ScratchDir s;
  auto args = commonFlags(width, height);
  args.push_back("--screenshot=" + (s / "shot.png").string());
  args.push_back("file://" + fs::absolute(page).string());
  const auto r = runProgram(chromiumBinary(), args);
  if (r.exit_code != 0 || !fs::exists(s / "shot.png")) {
    ADD_FAILURE() << "chromium --screenshot failed: " << r.err;
    return "";
  }
  return readFile(s / "shot.png");
}

}  // namespace posgeom::testing
