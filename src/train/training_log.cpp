#include "posgeom/train/training_log.h"

#include <cstdio>
#include <sstream>

namespace posgeom::train {

std::string logCsv(const std::vector<LogRow>& log) {
  std::ostringstream out;
  out << "step,learning_rate,train_loss,validation_loss\n";
  char line[160];
  for (const auto& r : log) {
    std::snprintf(line, sizeof(line), "%lld,%.9g,%.9g,", static_cast<long long>(r.step), r.learning_rate, r.train_loss);
    out << line;
    if (r.validation_loss) {
      std::snprintf(line, sizeof(line), "%.9g", *r.validation_loss);
      out << line;
    }
    out << "\n";
  }
  return out.str();
}

std::vector<LogRow> parseLog(const std::string& csv) {
  std::vector<LogRow> log;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    LogRow r;
    std::istringstream cells(line);
    std::string cell;
    std::getline(cells, cell, ',');
    r.step = std::stoll(cell);
    std::getline(cells, cell, ',');
    r.learning_rate = std::stod(cell);
    std::getline(cells, cell, ',');
    r.train_loss = std::stod(cell);
    if (std::getline(cells, cell, ',') && !cell.empty()) r.validation_loss = std::stod(cell);
    log.push_back(r);
  }
  return log;
}

}  // namespace posgeom::train
