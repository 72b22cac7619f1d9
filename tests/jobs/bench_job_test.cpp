#include "posgeom/jobs/bench_job.h"

#include <algorithm>

#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/flops.h"
#include "posgeom/pass/plan.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// A GPT-2 of 2 x 32 written into `s`, measured at T = 24 in batches of 2, one round, into bench.json.
jobs::BenchJob tinyBenchJob(const ScratchDir& s) {
  model::RandomCheckpointSpec spec;
  spec.layers = 2;
  spec.hidden_size = 32;
  spec.heads = 4;
  spec.max_positions = 32;
  model::writeRandomCheckpoint(spec, s / "tiny");
  jobs::BenchJob job;
  job.models = {s / "tiny"};
  job.seq_len = 24;
  job.batch_size = 2;
  job.rounds = 1;
  job.out = s / "bench.json";
  return job;
}

TEST(BenchJob, MeasuresATinyModelAndExplainsItsShare) {
  ScratchDir s;
  const auto r = jobs::runBench(tinyBenchJob(s));
  ASSERT_EQ(r.models.size(), 1u);
  const auto& m = r.models.front();
  EXPECT_GT(r.gemm_gflops, 0);
  EXPECT_GT(r.tokenizer_tokens_per_s, 0);
  EXPECT_GT(m.forward_tokens_per_s, 0);
  EXPECT_GT(m.analyze_tokens_per_s, 0);
  EXPECT_GT(m.analyze_heads_tokens_per_s, 0);
  EXPECT_EQ(m.batch, 2);
  // On the CPU the accumulators' own time is measured inside each pass: some, not all of it.
  ASSERT_TRUE(m.analyze_accumulator_share.has_value());
  EXPECT_GT(*m.analyze_accumulator_share, 0);
  ASSERT_TRUE(m.analyze_heads_accumulator_share.has_value());
  EXPECT_GT(*m.analyze_heads_accumulator_share, 0);
  ASSERT_EQ(m.rounds.size(), 1u);
  EXPECT_LT(m.rounds[0].analyze_accumulating, m.rounds[0].analyze);
  EXPECT_EQ(m.layers, 2);
  EXPECT_GE(m.peak_rss_bytes, m.checkpoint_bytes);
  EXPECT_GT(m.checkpoint_bytes, 0);
  const auto c = model::loadModelConfig(s / "tiny");
  EXPECT_DOUBLE_EQ(m.flops_per_token,
                   model::forwardFlopsPerToken(c, model::architectureFor("gpt2", "test").tensors(c), 24, true));
  EXPECT_NEAR(m.forward_gemm_share, m.forward_tokens_per_s * m.flops_per_token / (r.gemm_gflops * 1e9), 1e-12);

  const auto json = nlohmann::json::parse(readFile(s / "bench.json"));
  for (const char* key : {"gemm_gflops", "forward_tokens_per_s", "analyze_tokens_per_s", "analyze_heads_tokens_per_s",
                          "forward_gemm_share", "peak_rss_bytes"})
    ASSERT_TRUE(json.contains(key)) << key;
  EXPECT_DOUBLE_EQ(json["forward_tokens_per_s"].get<double>(), m.forward_tokens_per_s);
  EXPECT_EQ(json["models"].size(), 1u);
  ASSERT_EQ(json["models"][0]["rounds_s"].size(), 1u);  // the timings behind the rates
  EXPECT_NEAR(json["models"][0]["rounds_s"][0]["forward"].get<double>(), 2 * 24 / m.forward_tokens_per_s, 1e-9);
  EXPECT_NE(jobs::benchTable(r).find("% of the matrix-multiply throughput"), std::string::npos);
  EXPECT_NE(jobs::benchTable(r).find("the accumulators' own time"), std::string::npos);
  EXPECT_DOUBLE_EQ(json["models"][0]["analyze_accumulator_share"].get<double>(), *m.analyze_accumulator_share);
  EXPECT_FALSE(json["models"][0].contains("layer_major_tokens_per_s"));  // not asked
}

// bench --layer-major: one wave of whole batches, layer-major against resident on the same
// batches, in the JSON and the table.
TEST(BenchJob, LayerMajorIsMeasuredAgainstTheResidentPass) {
  ScratchDir s;
  auto job = tinyBenchJob(s);
  job.layer_major = true;
  job.wave = 7;  // whole batches: 6 windows
  const auto r = jobs::runBench(job);
  const auto& m = r.models.front();
  EXPECT_EQ(m.wave_windows, 6);
  ASSERT_TRUE(m.layer_major_tokens_per_s.has_value());
  EXPECT_GT(*m.layer_major_tokens_per_s, 0);
  // The same work either way: neither order is many times the other on a tiny model.
  EXPECT_GT(*m.layer_major_vs_resident, 0.2);
  EXPECT_LT(*m.layer_major_vs_resident, 5.0);
  const auto json = nlohmann::json::parse(readFile(s / "bench.json"));
  EXPECT_DOUBLE_EQ(json["models"][0]["layer_major_vs_resident"].get<double>(), *m.layer_major_vs_resident);
  EXPECT_EQ(json["models"][0]["wave_windows"], 6);
  EXPECT_NE(jobs::benchTable(r).find("% of resident on the same 6 windows"), std::string::npos) << jobs::benchTable(r);
}

// Acceptance (one analysis pass): what bench times is the pass analyze runs for the same
// options, configured by the same plan, with and without --heads.
TEST(BenchJob, TimesThePassAnalyzeConfiguresForTheSameOptions) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.layers = 3;
  spec.hidden_size = 32;
  spec.heads = 4;
  spec.max_positions = 64;
  model::writeRandomCheckpoint(spec, s / "tiny");
  jobs::BenchJob job;
  job.seq_len = 48;
  job.batch_size = 3;
  const auto [plan, heads_plan] = jobs::benchPlans(job, s / "tiny");
  // The options a user gives analyze for this shape: nothing else.
  pass::AnalyzeOptions analyze;
  analyze.seq_len = 48;
  analyze.batch_size = 3;
  analyze.report.screenot_k = 5;
  const auto config = model::loadModelConfig(s / "tiny");
  const auto want = pass::planPass(analyze, s / "tiny", config);
  EXPECT_TRUE(plan.pass == want.pass);
  EXPECT_EQ(plan.pass.accumulator.layers, (std::set<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(plan.pass.accumulator.skip_first, 1);
  EXPECT_FALSE(plan.pass.accumulator.attention_inputs);
  analyze.heads = true;
  const auto want_heads = pass::planPass(analyze, s / "tiny", config);
  EXPECT_TRUE(heads_plan.pass == want_heads.pass);
  EXPECT_TRUE(heads_plan.pass.accumulator.attention_inputs);
  EXPECT_EQ(heads_plan.pass.accumulator.caps.attention_samples, want_heads.pass.accumulator.caps.attention_samples);
  EXPECT_FALSE(plan.pass == heads_plan.pass);  // the comparison can tell them apart
}

TEST(BenchJob, BadRequestsFailBeforeAnyMeasurement) {
  ScratchDir s;
  jobs::BenchJob job;
  job.shapes = {"gpt2-small", "gpt5"};
  job.out = s / "never.json";
  EXPECT_THROW(jobs::runBench(job), InputError);
  job.shapes = {};
  job.models = {s / "missing"};
  EXPECT_THROW(jobs::runBench(job), InputError);
  job.models = {};
  job.rounds = 0;
  EXPECT_THROW(jobs::runBench(job), InputError);
  job.rounds = 1;
  job.wave = 8;  // without --layer-major
  EXPECT_THROW(jobs::runBench(job), InputError);
  job.layer_major = true;
  job.wave = -1;
  EXPECT_THROW(jobs::runBench(job), InputError);
  EXPECT_FALSE(std::filesystem::exists(s / "never.json"));
}

TEST(BenchJob, AnExistingOutIsReplacedOnlyWithForceAndAnInputNever) {
  // bench --out used to overwrite any file when the measuring was done, even the weights
  // it had just measured.
  ScratchDir s;
  writeFile(s / "mine.json", "mine");
  jobs::BenchJob job;
  job.shapes = {"gpt2-small"};
  job.out = s / "mine.json";
  try {
    jobs::runBench(job);
    ADD_FAILURE() << "an existing --out was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("exists; pass --force to replace it"), std::string::npos) << e.what();
  }
  EXPECT_EQ(readFile(s / "mine.json"), "mine");
}

// bench --work-dir used to write its random checkpoint over whatever <shape>/ held,
// a user's model included, after the matrix products had been measured.
TEST(BenchJob, AWorkDirsForeignCheckpointIsNeverReplaced) {
  ScratchDir s;
  std::filesystem::create_directories(s / "w/gpt2-small");
  writeFile(s / "w/gpt2-small/config.json", R"({"model_type": "llama"})");
  writeFile(s / "w/gpt2-small/model.safetensors", "mine");
  jobs::BenchJob job;
  job.shapes = {"gpt2-small"};
  job.work_dir = s / "w";
  job.out = s / "never.json";
  try {
    jobs::runBench(job);
    ADD_FAILURE() << "a foreign checkpoint was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--work-dir: '" + (s / "w/gpt2-small").string() + "' holds files bench did not write"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(readFile(s / "w/gpt2-small/model.safetensors"), "mine");
  EXPECT_FALSE(std::filesystem::exists(s / "never.json"));
}

// --seq-len past a model's learned positions used to be found after the corpus was read
// for the tokenizer's rate, and blamed on the corpus' documents.
TEST(BenchJob, ASeqLenBeyondTheModelsPositionsIsRefusedFirst) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.layers = 1;
  spec.hidden_size = 32;
  spec.heads = 4;
  spec.max_positions = 64;
  model::writeRandomCheckpoint(spec, s / "tiny");
  jobs::BenchJob job;
  job.models = {s / "tiny"};
  job.seq_len = 100000;
  job.out = s / "never.json";
  try {
    jobs::runBench(job);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {  // the plan's refusal, not the corpus' "no document holds one window"
    EXPECT_EQ(std::string(e.what()), "--seq-len: 100000 exceeds the model's 64 learned positions");
  }
  job.models = {};
  job.shapes = {"gpt2-small"};
  job.seq_len = 2048;
  try {
    jobs::runBench(job);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--seq-len: 2048 exceeds the 1024 positions of the benchmark shape gpt2-small");
  }
  EXPECT_FALSE(std::filesystem::exists(s / "never.json"));
}

TEST(BenchJob, ShapesAreThePublishedOnes) {
  // GPT-2 small and TinyLlama-1.1B as their configs give them.
  const auto& shapes = jobs::benchShapes();
  ASSERT_GE(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].name, "gpt2-small");
  EXPECT_EQ(shapes[0].spec.layers, 12);
  EXPECT_EQ(shapes[0].spec.hidden_size, 768);
  EXPECT_EQ(shapes[0].spec.vocab_size, 50257);
  const auto& tiny_llama = shapes[2];
  EXPECT_EQ(tiny_llama.name, "llama-1b");
  EXPECT_EQ(tiny_llama.spec.layers, 22);
  EXPECT_EQ(tiny_llama.spec.hidden_size, 2048);
  EXPECT_EQ(tiny_llama.spec.kv_heads, 4);
  EXPECT_EQ(tiny_llama.spec.intermediate_size, 5632);
  // Llama-2-7B as its config gives it, and its first two blocks.
  for (const auto& [name, layers] : {std::pair<std::string, int64_t>{"llama2-7b", 32}, {"llama2-7b-2l", 2}}) {
    const auto it = std::find_if(shapes.begin(), shapes.end(), [&](const auto& s) { return s.name == name; });
    ASSERT_NE(it, shapes.end()) << name;
    EXPECT_EQ(it->spec.layers, layers);
    EXPECT_EQ(it->spec.hidden_size, 4096);
    EXPECT_EQ(it->spec.heads, 32);
    EXPECT_EQ(it->spec.kv_heads, 32);
    EXPECT_EQ(it->spec.intermediate_size, 11008);
    EXPECT_EQ(it->spec.vocab_size, 32000);
  }
}

}  // namespace
}  // namespace posgeom::testing
