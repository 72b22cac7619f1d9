#pragma once
// What an analysis run is told beside its plan: where its state is saved and resumed
// from, how often it saves, and when it stops. With the plan, the only options that
// travel past planning. Torch-free.
#include <cstdint>
#include <filesystem>

namespace posgeom::pass {

struct RunControl {
  std::filesystem::path out;         // the report directory, as messages name it
  // Where saves go (the work directory: --out keeps its old report until the end); empty
  // on the ranks of a distributed run other than rank 0, which write nothing.
  std::filesystem::path state_file;
  // The state a resumed run continues (read by the process that writes); empty: a new run.
  std::filesystem::path resume_state;
  int64_t save_every = 0;            // windows (of all ranks); 0: every save_interval_s
  double save_interval_s = 600;
  int64_t stop_after = 0;            // windows (of all ranks); 0: never

  bool writes() const { return !state_file.empty(); }
  bool resumes() const { return !resume_state.empty(); }
};

}  // namespace posgeom::pass
