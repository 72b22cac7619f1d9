#include "posgeom/pass/options.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Options, ShardIsIOverN) {
  EXPECT_EQ(pass::parseShard("1/3"), (pass::Shard{1, 3}));
  EXPECT_EQ(pass::parseShard("0/1").str(), "0/1");
  for (const char* bad : {"3/2", "2/2", "-1/2", "1/0", "1", "a/b", "1/2x", "", "1/"})
    EXPECT_EQ(errorOf([&] { pass::parseShard(bad); }), "--shard: '" + std::string(bad) + "' must be i/n with 0 <= i < n") << bad;
}

TEST(Options, SamplingIsSequentialOrRandom) {
  EXPECT_EQ(pass::parseSampling("random"), pass::Sampling::kRandom);
  EXPECT_STREQ(pass::samplingName(pass::parseSampling("sequential")), "sequential");
  EXPECT_EQ(errorOf([] { pass::parseSampling("foo"); }), "--sampling: 'foo' (use sequential or random)");
}

TEST(Options, LayerSelectionIsJudgedAgainstTheModelLater) {
  EXPECT_TRUE(pass::parseLayerSelection("all").all());
  const auto some = pass::parseLayerSelection("3,0,99");
  EXPECT_EQ(some.indices, (std::vector<int64_t>{3, 0, 99}));  // 99: known only with the model
  EXPECT_EQ(pass::resolveLayers(pass::parseLayerSelection("3,0"), 13), (std::set<int64_t>{0, 3}));
  EXPECT_EQ(pass::resolveLayers(pass::parseLayerSelection("all"), 3), (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(errorOf([&] { pass::resolveLayers(some, 13); }), "--layer: '99' is not a hidden-state index in 0..12");
  for (const char* bad : {"-1", "x", "1,,2", ""}) EXPECT_THROW(pass::parseLayerSelection(bad), InputError) << bad;
}

TEST(Options, ValidationNamesTheOption) {
  {
    pass::AnalyzeOptions o;
    EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "");
    o.batch_size = -1;
    EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "--batch-size: must not be negative");
  }
  {
    pass::AnalyzeOptions o;
    o.heads = true;
    o.head_options.kernel_skip = -1;
    EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "--kernel-skip: must not be negative");
  }
  {
    pass::AnalyzeOptions o;
    o.heads = true;
    o.activations = "h.safetensors";
    EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "--heads: needs the model (--model), not --activations");
  }
  pass::AnalyzeOptions o;
  o.head_options.keep_kernels = true;
  EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "--save-kernels: saves the kernels of --heads: add --heads");
  o.heads = true;
  EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "");
  EXPECT_TRUE(pass::headOptionsOf(o).keep_kernels);
}

// These were accepted and recorded as given: a quota of -3, a head both local and uniform.
TEST(Options, ContradictoryOrNegativeValuesAreRefused) {
  pass::AnalyzeOptions o;
  o.windows_per_document = -3;
  EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "--windows-per-document: must not be negative (got -3; 0: no limit)");
  o = pass::AnalyzeOptions();
  o.heads = true;
  o.head_options.thresholds.local = 0.9;
  o.head_options.thresholds.uniform = 0.1;
  EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }),
            "--local-below: 0.9 is above --uniform-above 0.1: a head would be local and uniform at once");
  o.head_options.thresholds.uniform = 1.5;
  EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "--uniform-above: must lie in [0, 1] (it bounds ETC / keys), not 1.5");
  o.head_options.thresholds.uniform = 0.9;  // equal bounds leave no slow-decay heads, but contradict nothing
  EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "");
  o.head_options.contextual_cv = -0.1;
  EXPECT_EQ(errorOf([&] { pass::validateOptions(o); }), "--contextual-below: must not be negative");
}

TEST(Options, HeadOptionsCarryEveryHeadsSetting) {
  pass::AnalyzeOptions o;
  o.head_options.query = heads::QueryMode::kMeanEmbedding;
  o.head_options.kernel_skip = 3;
  o.head_options.thresholds.local = 0.05;
  o.head_options.thresholds.uniform = 0.7;
  o.head_options.contextual_cv = 0.3;
  o.report.screenot_k = 7;
  o.report.screenot_strategy = metrics::ScreeNotStrategy::kWinsorize;
  o.head_options.qk_maps = heads::parseHeadList("0.1,4.2");
  const auto h = pass::headOptionsOf(o);
  EXPECT_EQ(h.query, heads::QueryMode::kMeanEmbedding);
  EXPECT_EQ(h.kernel_skip, 3);
  EXPECT_EQ(h.thresholds.local, 0.05);
  EXPECT_EQ(h.thresholds.uniform, 0.7);
  EXPECT_EQ(h.contextual_cv, 0.3);
  EXPECT_EQ(h.subspace_k, 7);
  EXPECT_EQ(h.subspace_strategy, metrics::ScreeNotStrategy::kWinsorize);
  EXPECT_EQ(h.qk_maps, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {4, 2}}));
}

}  // namespace
}  // namespace posgeom::testing
