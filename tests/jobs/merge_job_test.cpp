#include "posgeom/jobs/merge_job.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>

#include "posgeom/base/error.h"
#include "posgeom/jobs/analyze_job.h"
#include "report_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// tiny-gpt2 on Shakespeare with a byte tokenizer: the analysis the merge tests shard.
pass::AnalyzeOptions shakespeareJob(const ScratchDir& s, int64_t seq_len, int64_t num_seqs) {
  pass::AnalyzeOptions job;
  job.model = (sharedDir() / "fixtures/models/tiny-gpt2").string();
  job.tokenizer = writeByteTokenizer(s / "tok");
  job.corpus.path = (sharedDir() / "data/corpora/tinyshakespeare.txt").string();
  job.seq_len = seq_len;
  job.num_seqs = num_seqs;
  return job;
}

TEST(MergeJob, TwoShardsMergedEqualOneRun) {
  POSGEOM_REQUIRE_SHARED("data/corpora/tinyshakespeare.txt");
  ScratchDir s;
  auto job = shakespeareJob(s, 32, 30);
  job.batch_size = 1;  // float32 matrix products may round differently with another batch composition
  job.report.screenot_k = 5;
  job.heads = true;
  job.caps.attention_samples = 5;
  job.out = s / "whole";
  jobs::runAnalyzeJob(job);
  analyzeShards(job, s.path(), 2);
  const auto whole = summaryOf(s / "whole"), merged = mergeShards(job, s.path(), 2);
  int compared = 0;
  // Floats to 1e-12, everything else exactly, into objects (the massive activations: their
  // maxima, windows, positions and token ids exactly) and lists of objects.
  std::function<void(const nlohmann::json&, const nlohmann::json&, const std::string&)> compare =
      [&](const nlohmann::json& a, const nlohmann::json& b, const std::string& where) {
        for (const auto& [key, value] : a.items()) {
          const auto& other = b.is_array() ? b.at(std::stoul(key)) : b.at(key);
          if (value.is_number_float()) {
            EXPECT_NEAR(other.get<double>(), value.get<double>(), 1e-12 * std::max(1.0, std::abs(value.get<double>()))) << where << key;
            ++compared;
          } else if (value.is_object() || (value.is_array() && !value.empty() && value.front().is_object())) {
            compare(value, other, where + key + ".");
          } else if (!value.is_array() || key == "positions") {
            EXPECT_EQ(other, value) << where << key;
          }
        }
      };
  for (std::size_t l = 0; l < whole["layers"].size(); ++l) compare(whole["layers"][l], merged["layers"][l], "");
  EXPECT_GT(compared, 40 + 3 * 8 * 2);  // with each layer's 8 top dimensions' max and ratio
  ASSERT_EQ(whole["heads"].size(), merged["heads"].size());
  for (std::size_t h = 0; h < whole["heads"].size(); ++h) compare(whole["heads"][h], merged["heads"][h], "");
  EXPECT_EQ(merged["heads"][0]["samples"], 5);
  EXPECT_GT(compared, 40 + 3 * 8 * 2 + 10 * static_cast<int>(whole["heads"].size()));
  EXPECT_EQ(merged["data"]["windows"], 30);
}

TEST(MergeJob, TheDefaultScreeNotBoundIsCutToTheStatesAsAnalyzeCutsIt) {
  // Shards of short windows analysed with the default bound (20, cut to fit by analyze):
  // their merge used the uncut 20 and failed on "--screenot-k: 20 is too large".
  POSGEOM_REQUIRE_SHARED("data/corpora/tinyshakespeare.txt");
  ScratchDir s;
  analyzeShards(shakespeareJob(s, 16, 8), s.path(), 2);
  jobs::MergeJob merge;
  merge.states = {s / "shard0/state.safetensors", s / "shard1/state.safetensors"};
  merge.out = s / "merged";
  jobs::runMergeJob(merge);
  EXPECT_EQ(summaryOf(s / "merged")["report"]["screenot_k"], summaryOf(s / "shard0")["report"]["screenot_k"]);
  EXPECT_LT(summaryOf(s / "merged")["report"]["screenot_k"].get<int>(), 20);
  // A bound the user gave that does not fit stays an error.
  merge.out = s / "given";
  merge.report.screenot_k = 20;
  merge.report.screenot_k_given = true;
  EXPECT_THROW(jobs::runMergeJob(merge), InputError);
  EXPECT_FALSE(fs::exists(s / "given"));
}

TEST(MergeJob, HeadsOfAnotherModelTypeAreRefused) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  auto job = randomTokenRun("tiny-gpt2", 4, 16, s / "run");
  job.heads = true;
  jobs::runAnalyzeJob(job);
  jobs::MergeJob merge;
  merge.states = {s / "run/state.safetensors"};
  merge.out = s / "merged";
  merge.report = job.report;
  merge.model = (sharedDir() / "fixtures/models/tiny-bloom").string();
  EXPECT_THROW(jobs::runMergeJob(merge), InputError);
  EXPECT_FALSE(fs::exists(s / "merged"));
}

}  // namespace
}  // namespace posgeom::testing
