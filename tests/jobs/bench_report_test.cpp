#include "posgeom/jobs/bench_job.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

jobs::BenchResult twoModels() {
  jobs::BenchResult r;
  r.device = "cpu";
  r.dtype = "bfloat16";
  r.compute = "bfloat16 emulated in float32";
  r.gemm_gflops = 200;
  r.tokenizer_tokens_per_s = 1e6;
  for (const char* name : {"first", "second"}) {
    jobs::BenchModelResult m;
    m.name = name;
    m.forward_tokens_per_s = 1000;
    m.analyze_tokens_per_s = 800;
    m.analyze_heads_tokens_per_s = 500;
    m.analyze_accumulator_share = 0.05;
    m.peak_rss_bytes = 3 << 20;
    m.checkpoint_bytes = 1 << 20;
    m.rounds = {{1.0, 1.25, 2.0, 0.1, 0.2}};
    m.hidden_size = 4096;
    m.metrics_per_layer_s = 6.0;
    m.eigh_s = 3.0;
    m.heads_per_head_s = 0.15;
    r.models.push_back(m);
  }
  r.models[1].forward_tokens_per_s = 2000;
  return r;
}

TEST(BenchReport, JsonPutsTheFirstModelAtTheTopAndEveryModelUnderModels) {
  const auto json = jobs::benchJson(twoModels());
  EXPECT_EQ(json["model"], "first");
  EXPECT_EQ(json["dtype"], "bfloat16");
  EXPECT_EQ(json["compute"], "bfloat16 emulated in float32");  // how it ran
  EXPECT_DOUBLE_EQ(json["forward_tokens_per_s"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(json["tokenizer_share"].get<double>(), 1e-3);
  ASSERT_EQ(json["models"].size(), 2u);
  EXPECT_DOUBLE_EQ(json["models"][0]["analyze_overhead"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(json["models"][0]["analyze_heads_overhead"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(json["models"][0]["analyze_accumulator_share"].get<double>(), 0.05);
  EXPECT_TRUE(json["models"][0]["analyze_heads_accumulator_share"].is_null());  // not measured
  EXPECT_DOUBLE_EQ(json["models"][1]["forward_tokens_per_s"].get<double>(), 2000);
  EXPECT_DOUBLE_EQ(json["models"][0]["rounds_s"][0]["analyze_heads"].get<double>(), 2.0);
  EXPECT_FALSE(json["models"][0].contains("device_memory_bytes"));
  EXPECT_DOUBLE_EQ(json["models"][0]["metrics_per_layer_over_eigh"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(json["models"][0]["heads_per_head_s"].get<double>(), 0.15);
}

TEST(BenchReport, TableSaysWhatEachRateCosts) {
  const auto table = jobs::benchTable(twoModels());
  EXPECT_EQ(table.rfind("device cpu, bfloat16 emulated in float32, ", 0), 0u) << table;
  EXPECT_NE(table.find("25.0% over forward; the accumulators' own time 5.0% of the pass"), std::string::npos) << table;
  EXPECT_NE(table.find("100.0% over forward"), std::string::npos) << table;
  EXPECT_NE(table.find("(checkpoint 1.0 MiB, 2.0 MiB beyond it)"), std::string::npos) << table;
  EXPECT_NE(table.find("second ("), std::string::npos);
  EXPECT_NE(table.find("metrics 6.00 s per layer (2.00 x one 4096^2 eigendecomposition, 3.00 s), heads 0.150 s per head"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace posgeom::testing
