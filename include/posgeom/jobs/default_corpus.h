#pragma once
// The corpus read when none is given: Debian's licence texts (kDefaultCorpus), or, on a
// system without them (not Debian), the copy of some of them bundled with posgeom, the
// same kind of text the bundled default model was trained on. Torch-free.
#include <filesystem>

#include "posgeom/jobs/analyze_job.h"

namespace posgeom::jobs {

// corpora/default in the source tree, found as the default model is.
std::filesystem::path bundledCorpusDir();

// `system` where it exists; else `bundled`, with one info line saying so; `system` again
// when neither exists, so that the corpus reader names the usual directory.
std::filesystem::path defaultCorpus(const std::filesystem::path& system = kDefaultCorpus,
                                    const std::filesystem::path& bundled = bundledCorpusDir());

}  // namespace posgeom::jobs
