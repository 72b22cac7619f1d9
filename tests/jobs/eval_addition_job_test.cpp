#include "posgeom/jobs/eval_addition_job.h"

#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/jobs/train_job.h"
#include "posgeom/train/addition_eval.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// Two steps of a tiny addition model, trained as `posgeom train` trains it.
fs::path tinyAdditionModel(const ScratchDir& s) {
  writeFile(s / "add.toml", "[model]\nlayers = 1\nheads = 2\nwidth = 32\ncontext = 40\n[data]\ntask = \"addition\"\ndigits = 2\n"
                            "[optim]\niterations = 2\nbatch_size = 4\nwarmup = 1\n[run]\neval_interval = 2\neval_batches = 1\n");
  jobs::TrainJob train;
  train.config = s / "add.toml";
  train.out = s / "add";
  std::ostringstream said;
  jobs::runTrainJob(train, said);
  return train.out;
}

TEST(EvalAdditionJob, PrintsTheTableAndWritesItAsCsvOnlyWhereAllowed) {
  ScratchDir s;
  jobs::EvalAdditionJob job;
  job.model = tinyAdditionModel(s);
  job.max_digits = 3;
  job.samples = 4;
  job.out = s / "acc.csv";
  std::ostringstream table;
  jobs::runEvalAdditionJob(job, table);
  const auto rows = train::evaluateAddition(job.model, 3, 4, 7, runtime::DeviceSpec{});
  EXPECT_EQ(table.str(), train::additionTable(rows));
  EXPECT_EQ(readFile(job.out), train::additionCsv(rows));
  // An existing --out is refused before the evaluation prints anything, and kept.
  std::ostringstream refused;
  EXPECT_THROW(jobs::runEvalAdditionJob(job, refused), InputError);
  EXPECT_TRUE(refused.str().empty());
  job.force = true;
  job.samples = 2;
  jobs::runEvalAdditionJob(job, refused);
  EXPECT_EQ(readFile(job.out), train::additionCsv(train::evaluateAddition(job.model, 3, 2, 7, runtime::DeviceSpec{})));
}

}  // namespace
}  // namespace posgeom::testing
