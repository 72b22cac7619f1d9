#include "posgeom/jobs/forward_job.h"

#include "posgeom/io/hub_cache.h"

namespace posgeom::jobs {

void runForwardJob(const ForwardJob& job) {
  auto request = job.request;
  request.model_dir = io::resolveModelDir(job.model, io::processEnv());
  model::writeHiddenStates(request);
}

}  // namespace posgeom::jobs
