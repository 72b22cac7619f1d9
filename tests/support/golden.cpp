#include "golden.h"

#include <set>

#include <algorithm>
#include <cstdio>
#include <set>

#include <gtest/gtest.h>

#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"
#include "test_devices.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

class Collector final : public model::LayerObserver {
 public:
  void onHidden(int64_t layer, const at::Tensor& h) override {
    hidden.resize(static_cast<size_t>(layer) + 1);
    hidden[static_cast<size_t>(layer)] = h.to(at::kDouble);
  }
  std::vector<at::Tensor> hidden;
};

}  // namespace

std::vector<GoldenComparison> compareWithGolden(const std::string& model_name, const std::string& golden_name,
                                                const model::Numerics& numerics, bool causal) {
  return compareWithGoldenFile(sharedDir() / "fixtures" / "models" / model_name,
                               sharedDir() / "fixtures" / "golden" / (golden_name + ".safetensors"), numerics, causal);
}

std::vector<GoldenComparison> compareWithGoldenFile(const std::filesystem::path& dir, const std::filesystem::path& golden_path,
                                                    const model::Numerics& numerics, bool causal) {
  const auto golden = io::SafetensorsFile::open(golden_path);
  const auto loaded = model::loadModel(dir, numerics);
  Collector collector;
  model::ForwardRequest request;
  request.ids = model::tensorFromView(golden.get("input_ids")).to(at::kLong);
  if (causal) request.causal = true;
  request.want_final_norm = true;
  request.want_logits = true;
  request.observer = &collector;
  const auto out = loaded.model->forward(request);

  std::vector<GoldenComparison> result;
  for (const auto& [name, view] : golden.tensors()) {
    // Attention maps (and the constant-content ones) are the heads tests' concern; T5's
    // buckets its family test's.
    if (name == "input_ids" || name.rfind("attention.", 0) == 0 || name.rfind("constant_", 0) == 0 ||
        name == "relative_position_bucket")
      continue;
    GoldenComparison c;
    c.tensor = name;
    at::Tensor produced;
    if (name == "final_norm") produced = out.final_norm;
    if (name == "logits") produced = out.logits;
    if (name.rfind("hidden.", 0) == 0) {
      const auto l = std::stoul(name.substr(7));
      if (l < collector.hidden.size()) produced = collector.hidden[l];
    }
    const auto expected = model::tensorFromView(view).to(at::kDouble);
    c.max_abs_golden = expected.abs().max().item<double>();
    c.produced = produced.defined() && produced.sizes() == expected.sizes();
    if (c.produced) c.max_abs_error = (produced.to(at::kCPU, at::kDouble) - expected).abs().max().item<double>();
    result.push_back(c);
  }
  return result;
}

namespace {

void expectMatches(const std::vector<GoldenComparison>& comparisons, const std::string& golden_name,
                   const std::string& dtype, const std::string& device, double rel_tol) {
  ASSERT_FALSE(comparisons.empty());
  double worst = 0;
  for (const auto& c : comparisons) {
    EXPECT_TRUE(c.produced) << golden_name << ": " << c.tensor << " not produced";
    EXPECT_LE(c.max_abs_error, rel_tol * (1.0 + c.max_abs_golden))
        << golden_name << " " << c.tensor << " in " << dtype << " on " << device << ": max |error| " << c.max_abs_error;
    worst = std::max(worst, c.max_abs_error / (1.0 + c.max_abs_golden));
  }
  // The README's precision table: --gtest_output=xml records it per case.
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", worst);
  ::testing::Test::RecordProperty("worst_relative_error", text);
}

}  // namespace

double float64Tolerance(const std::string& golden) {
  // References stored in float64 by a transformers forward that is float64 throughout (no
  // float32 norm, softmax or rotary table inside): the same arithmetic, another order.
  static const std::set<std::string> exact = {"hf-bert", "hf-gpt2", "hf-roberta", "hf-deberta-v2", "hf-deberta-v3",
                                              "all-minilm-l6-v2"};
  return exact.count(golden) ? kFloat64Tolerance : kFloat32Tolerance;
}

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.golden << " in " << c.dtype << " on " << c.device; }

std::vector<GoldenCase> goldenCases(const std::string& model, const std::string& golden, bool causal) {
  std::vector<GoldenCase> out;
  for (const auto& device : testDevices())
    for (const char* dtype : {"float32", "bfloat16", "float16", "float64"}) out.push_back({model, golden, causal, dtype, device});
  return out;
}

std::vector<GoldenCase> hfGoldenCases(const std::string& name) {
  auto cases = goldenCases(name, name);
  for (auto& c : cases) c.source = GoldenCase::Source::kHf;
  return cases;
}

std::vector<GoldenCase> realGoldenCases(const std::string& name) {
  auto cases = goldenCases(name, name);
  for (auto& c : cases) c.source = GoldenCase::Source::kReal;
  return cases;
}

std::string goldenCaseName(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string n = info.param.golden + "_" + info.param.dtype + (info.param.device == "cpu" ? "" : "_" + info.param.device);
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

TEST_P(GoldenParity, MatchesTheFloat64Reference) {
  const auto& c = GetParam();
  using Source = GoldenCase::Source;
  if (c.source == Source::kShared) POSGEOM_REQUIRE_SHARED("fixtures/golden/" + c.golden + ".safetensors");
  if (c.source == Source::kReal) POSGEOM_REQUIRE_REAL_MODEL(c.model);
  const double tolerance = c.dtype == "float32"    ? kFloat32Tolerance
                           : c.dtype == "bfloat16" ? kBFloat16Tolerance
                           : c.dtype == "float64"  ? float64Tolerance(c.golden)
                                                   : kFloat16Tolerance;
  const auto numerics = model::Numerics::parse(c.dtype, c.device);
  const auto real_golden = std::filesystem::path(POSGEOM_SOURCE_DIR) / "tests/fixtures/real" / (c.golden + ".golden.safetensors");
  expectMatches(c.source == Source::kHf
                    ? compareWithGoldenFile(hfFixtureDir(c.model), hfFixtureDir(c.model) / "golden.safetensors", numerics, c.causal)
                : c.source == Source::kReal ? compareWithGoldenFile(realModelDir(c.model), real_golden, numerics, c.causal)
                                            : compareWithGolden(c.model, c.golden, numerics, c.causal),
                c.golden, c.dtype, c.device, tolerance);
}

}  // namespace posgeom::testing
