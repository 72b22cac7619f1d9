#include "report_fixtures.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "posgeom/anova/accumulator.h"
#include "posgeom/io/json_file.h"
#include "posgeom/jobs/analyze_job.h"
#include "posgeom/jobs/merge_job.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/tokenize/pre_tokenizer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace fs = std::filesystem;

nlohmann::json summaryOf(const fs::path& report_dir) { return io::readJsonFile(report_dir / "summary.json"); }

Eigen::MatrixXd readCsv(const fs::path& path) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(readFile(path));
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream cells(line);
    std::string cell;
    std::getline(cells, cell, ',');  // the index column
    while (std::getline(cells, cell, ',')) row.push_back(cell.empty() ? std::nan("") : std::stod(cell));
    if (!line.empty() && line.back() == ',') row.push_back(std::nan(""));
    rows.push_back(row);
  }
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.at(0).size()));
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < rows[r].size(); ++c) m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = rows[r][c];
  return m;
}

Eigen::MatrixXd weightMatrix(const io::SafetensorsFile& file, const std::string& name) {
  return anova::toEigen(model::tensorFromView(file.get(name)));
}

Eigen::VectorXd softmaxRow(const Eigen::VectorXd& logits) {
  const Eigen::VectorXd e = (logits.array() - logits.maxCoeff()).exp();
  return e / e.sum();
}

fs::path writeByteTokenizer(const fs::path& dir) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[tokenize::byteToUnicode()[static_cast<size_t>(b)]] = b;
  fs::create_directories(dir);
  writeFile(dir / "tokenizer.json",
            nlohmann::json{{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}},
                           {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}}}
                .dump());
  return dir;
}

pass::AnalyzeOptions randomTokenRun(const std::string& fixture_model, int64_t windows, int64_t seq_len,
                                    const std::filesystem::path& out) {
  pass::AnalyzeOptions job;
  job.model = (sharedDir() / "fixtures/models" / fixture_model).string();
  job.corpus.path = "random";
  job.num_seqs = windows;
  job.seq_len = seq_len;
  job.report.screenot_k = 3;
  job.out = out;
  return job;
}

void analyzeShards(pass::AnalyzeOptions job, const fs::path& dir, int count) {
  for (int i = 0; i < count; ++i) {
    job.shard = pass::Shard{i, count};
    job.out = dir / ("shard" + std::to_string(i));
    jobs::runAnalyzeJob(job);
  }
}

nlohmann::json mergeShards(const pass::AnalyzeOptions& job, const fs::path& dir, int count) {
  jobs::MergeJob merge;
  for (int i = 0; i < count; ++i) merge.states.push_back(dir / ("shard" + std::to_string(i)) / "state.safetensors");
  merge.out = dir / "merged";
  merge.report = job.report;
  merge.model = job.model;
  jobs::runMergeJob(merge);
  return summaryOf(merge.out);
}

}  // namespace posgeom::testing
