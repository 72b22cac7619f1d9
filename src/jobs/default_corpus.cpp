#include "posgeom/jobs/default_corpus.h"

#include <spdlog/spdlog.h>

namespace posgeom::jobs {
namespace fs = std::filesystem;

fs::path bundledCorpusDir() { return POSGEOM_BUNDLED_CORPUS_DIR; }

fs::path defaultCorpus(const fs::path& system, const fs::path& bundled) {
  std::error_code ec;
  if (fs::exists(system, ec) || !fs::exists(bundled, ec)) return system;
  spdlog::info("{} is missing (not a Debian system?): using the corpus bundled with posgeom, {}", system.string(), bundled.string());
  return bundled;
}

}  // namespace posgeom::jobs
