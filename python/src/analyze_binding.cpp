// posgeom.analyze: the CLI's analyze job, from Python, returning its results.
#include <nanobind/stl/string.h>

#include <cstdlib>
#include <filesystem>

#include "analyze_options.h"
#include "bindings.h"
#include "posgeom/base/error.h"
#include "posgeom/jobs/analyze_job.h"
#include "python_values.h"

namespace posgeom::python {
namespace fs = std::filesystem;
namespace {

// A directory of its own under the system's temporary directory, removed with the object:
// where a run without out= keeps its state while it runs.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "posgeom-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("could not make a temporary directory in " + fs::temp_directory_path().string());
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

void bindAnalyze(nb::module_& m) {
  m.def(
      "analyze",
      [](const nb::kwargs& kwargs) {
        auto options = analyzeOptionsOf(kwargs, {"out", "force"});
        if (kwargs.contains("force") && !kwargs["force"].is_none()) options.force = boolArgument(kwargs["force"], "force");
        const bool keep = kwargs.contains("out") && !kwargs["out"].is_none();
        std::unique_ptr<TemporaryDirectory> scratch;
        if (keep) {
          options.out = textArgument(kwargs["out"], "out");
        } else {
          scratch = std::make_unique<TemporaryDirectory>();
          options.out = scratch->path() / "report";
        }
        nb::gil_scoped_release released;
        return jobs::runAnalyzeJob(options);
      },
      nb::sig("def analyze(**options: object) -> Results"),
      "Runs `posgeom analyze` with these options (its names, '-' written '_': model=, corpus=, layer=, seq_len=, num_seqs=, "
      "heads=, device=, dtype=, shard=, ...) and returns its posgeom.Results. With out=, the report directory is written "
      "there as the CLI writes it (force=True replaces an old report); without, nothing is kept.");
}

}  // namespace posgeom::python
