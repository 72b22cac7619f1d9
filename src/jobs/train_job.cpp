#include "posgeom/jobs/train_job.h"

#include <algorithm>
#include <ostream>

namespace posgeom::jobs {

void runTrainJob(const TrainJob& job, std::ostream& out) {
  auto config = train::readTrainConfig(job.config);
  if (!job.out.empty()) config.run.out = job.out;
  if (job.iterations > 0) config.optim.iterations = job.iterations;
  if (job.save_every >= 0) config.run.save_every = job.save_every;
  const auto log = train::runTraining(config, job.options);
  out << "trained " << log.size() << " steps into " << config.run.out.string();
  if (const auto loss = train::lastValidationLoss(log))
    out << " (final validation loss " << *loss << ")\n";
  else
    out << " (not evaluated yet: the first evaluation is at step " << std::min(config.run.eval_interval, config.optim.iterations)
        << ")\n";
}

}  // namespace posgeom::jobs
