#pragma once
// Helpers for the pipeline suite: reading a report back, fixture weights as matrices,
// and a byte-level tokenizer that fits the fixture models.
#include <Eigen/Dense>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "posgeom/io/safetensors.h"
#include "posgeom/pass/options.h"

namespace posgeom::testing {

nlohmann::json summaryOf(const std::filesystem::path& report_dir);
// A matrix CSV of the report (a header row, an index column) as the matrix; empty cells NaN.
Eigen::MatrixXd readCsv(const std::filesystem::path& path);
// A tensor of at most two dimensions of a checkpoint as a float64 matrix.
Eigen::MatrixXd weightMatrix(const io::SafetensorsFile& file, const std::string& name);
// Softmax of a row of logits.
Eigen::VectorXd softmaxRow(const Eigen::VectorXd& logits);
// A tokenizer.json whose vocabulary is the 256 bytes: it fits the fixture models' 1000 ids.
std::filesystem::path writeByteTokenizer(const std::filesystem::path& dir);
// analyze's options for a fixture model on `windows` random windows of `seq_len` tokens,
// ScreeNOT bounded at 3, into `out`.
pass::AnalyzeOptions randomTokenRun(const std::string& fixture_model, int64_t windows, int64_t seq_len,
                                    const std::filesystem::path& out);

// Each of `count` shards of `job` into dir/shard<i>.
void analyzeShards(pass::AnalyzeOptions job, const std::filesystem::path& dir, int count);
// Those shards' states merged (`job`'s report options and model) into dir/merged: its summary.
nlohmann::json mergeShards(const pass::AnalyzeOptions& job, const std::filesystem::path& dir, int count);

}  // namespace posgeom::testing
