#include "posgeom/jobs/baseline_job.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "posgeom/anova/state_file.h"
#include "posgeom/base/byte_size.h"
#include "posgeom/base/error.h"
#include "posgeom/base/process_memory.h"
#include "posgeom/jobs/output_directory.h"
#include "posgeom/jobs/report_writer.h"
#include "posgeom/pass/plan.h"

namespace posgeom::jobs {

void runSinusoidalBaseline(int64_t dim, int64_t seq_len, const std::filesystem::path& out, const pass::ReportOptions& report,
                           bool force) {
  if (dim <= 0 || dim % 2 || seq_len < 2) throw InputError("baseline", "needs an even --dim > 0 and --seq-len >= 2");
  // The default ScreeNOT bound cut to the embedding's size, as analyze cuts it.
  const auto fitted = pass::fitReportOptions(report, seq_len, dim);
  // The end stage holds P and its SVD factors (T x d each), the second moment (d x d) and
  // the Gram and its DCT (T x T), in doubles: refused before, not a bad_alloc after.
  const long double rows = static_cast<long double>(seq_len), cols = static_cast<long double>(dim);
  const long double needed = 8 * (4 * rows * cols + 2 * cols * cols + 4 * rows * rows);
  if (const auto available = availableHostMemory(); available && needed > static_cast<long double>(*available))
    throw InputError("baseline", "--dim " + std::to_string(dim) + " and --seq-len " + std::to_string(seq_len) +
                                     " need about " + formatBytes(needed > 9e18L ? INT64_MAX : static_cast<int64_t>(needed)) +
                                     " of memory, and " + formatBytes(*available) + " is available");
  Eigen::MatrixXd pe(seq_len, dim);
  for (int64_t t = 0; t < seq_len; ++t)
    for (int64_t i = 0; i < dim / 2; ++i) {
      const double angle = static_cast<double>(t) / std::pow(10000.0, 2.0 * static_cast<double>(i) / static_cast<double>(dim));
      pe(t, 2 * i) = std::sin(angle);
      pe(t, 2 * i + 1) = std::cos(angle);
    }
  // One "sequence" that is the embedding itself: its positional basis is PE minus its mean.
  anova::LayerStatistics s;
  s.sequences = 1;
  s.position_sum = pe;
  s.second_moment = pe.transpose() * pe;
  s.context_means = pe.colwise().mean();
  s.context_second_moment = s.context_means.transpose() * s.context_means;
  s.context_windows = {0};
  s.context_labels = {""};
  s.norm_sum = pe.rowwise().norm().sum();
  anova::AnalysisState state;
  state.settings = {{"tool", "posgeom"}, {"source", "sinusoidal baseline"}, {"dim", dim}, {"seq_len", seq_len}, {"skip_first", 0}};
  state.windows = 1;
  state.layers.push_back(std::move(s));
  OutputDirectory output(out, force ? OutMode::kForce : OutMode::kNew);
  writeReport(state, fitted, output.work());
  output.commit();
  spdlog::info("sinusoidal baseline (d={}, T={}) in {}", dim, seq_len, out.string());
}

}  // namespace posgeom::jobs
