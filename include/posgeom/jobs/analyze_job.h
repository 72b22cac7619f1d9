#pragma once
// `posgeom analyze`: the whole flow of DESIGN §1, from a corpus (or hidden states made
// elsewhere) to state.safetensors and the report. Torch-free.
#include <filesystem>

#include "posgeom/jobs/report_writer.h"
#include "posgeom/pass/options.h"

namespace posgeom::jobs {

// A run stopped by SIGINT or SIGTERM (or --stop-after) saves its state in --out and
// throws RunStopped; the same options with `resume` = that directory continue it and give
// exactly the numbers of a run never stopped (same threads and device).
// Without a model (and without activations) the bundled default model is analysed
// (models/default, or $POSGEOM_DEFAULT_MODEL); without a corpus, kDefaultCorpus.
// Returns what the report holds (empty on a rank other than rank 0 of a distributed run).
ComputedReport runAnalyzeJob(const pass::AnalyzeOptions& options);

std::filesystem::path defaultModelDir();
// Present on every Debian system (base-files): the licence texts, one document each.
inline constexpr const char* kDefaultCorpus = "/usr/share/common-licenses";
inline constexpr const char* kStateFile = "state.safetensors";

}  // namespace posgeom::jobs
