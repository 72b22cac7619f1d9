#pragma once
// `posgeom forward`: ids in, every hidden state (and final norm, logits) out. Torch-free.
#include <filesystem>
#include <string>
#include <vector>

#include "posgeom/model/hidden_states.h"

namespace posgeom::jobs {

struct ForwardJob {
  std::string model;     // directory or hub name
  std::string revision;  // of a hub name: branch, tag or commit (empty: main), as analyze's
  model::HiddenStatesRequest request;  // everything but the model directory
  bool force = false;    // replace an existing --out file (never one of the run's inputs)
};

void runForwardJob(const ForwardJob& job);

}  // namespace posgeom::jobs
