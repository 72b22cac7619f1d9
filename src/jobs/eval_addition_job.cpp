#include "posgeom/jobs/eval_addition_job.h"

#include <optional>
#include <ostream>

#include "posgeom/base/option_names.h"
#include "posgeom/io/output_file.h"
#include "posgeom/train/addition_eval.h"

namespace posgeom::jobs {

void runEvalAdditionJob(const EvalAdditionJob& job, std::ostream& table) {
  // --out checked (and locked) before the evaluation runs.
  std::optional<io::OutputFile> out;
  if (!job.out.empty()) out.emplace(job.out, io::OutputFileRules{option::kOut, job.force, {job.model}});
  const auto rows = train::evaluateAddition(job.model, job.max_digits, job.samples, job.seed, job.device);
  table << train::additionTable(rows);
  if (out) out->writeText(train::additionCsv(rows));
}

}  // namespace posgeom::jobs
