// posgeom.analyze: the CLI's analyze job, from Python, returning its results.
#include <nanobind/stl/string.h>

#include <filesystem>

#include "analyze_options.h"
#include "bindings.h"
#include "posgeom/base/error.h"
#include "posgeom/io/temporary_directory.h"
#include "posgeom/jobs/analyze_job.h"
#include "python_values.h"

namespace posgeom::python {
namespace fs = std::filesystem;

void bindAnalyze(nb::module_& m) {
  m.def(
      "analyze",
      [](const nb::kwargs& kwargs) {
        auto options = analyzeOptionsOf(kwargs, {"out", "force", "dist_init", "resume"});
        if (kwargs.contains("resume") && !kwargs["resume"].is_none()) options.resume = textArgument(kwargs["resume"], "resume");
        if (!options.resume.empty() && kwargs.contains("out") && !kwargs["out"].is_none() &&
            fs::path(textArgument(kwargs["out"], "out")) != options.resume)
          throw InputError("resume", "continues in its own directory; leave out out= or give the same one");
        // One process, even inside a torchrun or srun script (RANK and WORLD_SIZE set for
        // the caller's own use); dist_init="env" makes this call one rank of a distributed run.
        options.dist_init = kwargs.contains("dist_init") && !kwargs["dist_init"].is_none() ? textArgument(kwargs["dist_init"], "dist_init") : "none";
        if (kwargs.contains("force") && !kwargs["force"].is_none()) options.force = boolArgument(kwargs["force"], "force");
        const bool keep = (kwargs.contains("out") && !kwargs["out"].is_none()) || !options.resume.empty();
        std::unique_ptr<io::TemporaryDirectory> scratch;  // where a run without out= keeps its state while it runs
        if (keep) {
          options.out = options.resume.empty() ? fs::path(textArgument(kwargs["out"], "out")) : options.resume;
        } else {
          scratch = std::make_unique<io::TemporaryDirectory>("analyze");
          options.out = scratch->path() / "report";
        }
        if (options.force && !keep) throw InputError("force", "replaces the report in out=: give out= too");
        nb::gil_scoped_release released;
        try {
          return jobs::runAnalyzeJob(options);
        } catch (const RunStopped& e) {
          if (keep) throw;
          throw RunStopped("stopped; nothing was kept (with out=, a stopped run can be resumed)", e.exitCode());
        }
      },
      nb::sig("def analyze(**options: object) -> Results"),
      "Runs `posgeom analyze` with these options (its names, '-' written '_': model=, corpus=, layer=, seq_len=, num_seqs=, "
      "heads=, device=, dtype=, shard=, ...) and returns its posgeom.Results. With out=, the report directory is written "
      "there as the CLI writes it (force=True replaces an old report); without, nothing is kept. One process, unless "
      "dist_init='env' (or a tcp:// address) makes it a rank of a distributed run. Ctrl-C stops the pass at its next "
      "batch (KeyboardInterrupt; with out=, resume with resume=out).");
}

}  // namespace posgeom::python
