#pragma once
// train_log.csv: a training run's log, one row a step, written at each save and read back
// when a run resumes. Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace posgeom::train {

struct LogRow {
  int64_t step = 0;
  double learning_rate = 0;
  double train_loss = 0;
  std::optional<double> validation_loss;  // at the steps evaluated only
};

// step,learning_rate,train_loss,validation_loss: 9 significant digits, so the values read
// back are the run's to the last printed digit; an empty cell where nothing was evaluated.
std::string logCsv(const std::vector<LogRow>& log);
std::vector<LogRow> parseLog(const std::string& csv);

}  // namespace posgeom::train
