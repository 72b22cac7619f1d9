#pragma once
// `posgeom forward`: ids in, every hidden state (and final norm, logits) out. Torch-free.
#include <filesystem>
#include <string>

#include "posgeom/model/hidden_states.h"

namespace posgeom::jobs {

struct ForwardJob {
  std::string model;  // directory or hub name
  model::HiddenStatesRequest request;  // everything but the model directory
};

void runForwardJob(const ForwardJob& job);

}  // namespace posgeom::jobs
