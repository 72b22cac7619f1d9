#pragma once
// Runs a fixture model on its golden input_ids and compares with the float64 reference.
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "posgeom/model/numerics.h"

namespace posgeom::testing {

struct GoldenComparison {
  std::string tensor;  // hidden.<l>, final_norm, logits
  double max_abs_error = 0;
  double max_abs_golden = 0;
  bool produced = false;  // the model wrote this tensor at all
};

// `model` names ../shared/fixtures/models/<model>, `golden` ../shared/fixtures/golden/<golden>.safetensors.
std::vector<GoldenComparison> compareWithGolden(const std::string& model, const std::string& golden,
                                                const model::Numerics& numerics, bool causal);
// The same for a model directory and a golden file given as paths.
std::vector<GoldenComparison> compareWithGoldenFile(const std::filesystem::path& model_dir,
                                                    const std::filesystem::path& golden, const model::Numerics& numerics,
                                                    bool causal);


// Relative to 1 + max|golden|. float32 is the acceptance floor (worst measured 1.3e-6).
// The reduced precisions were measured on all fixtures (worst: bfloat16 0.042 and
// float16 0.0052, both tiny-llama) and are held to about 2.5x that (README, "Precision").
constexpr double kFloat32Tolerance = 1e-4;
constexpr double kBFloat16Tolerance = 0.1;
constexpr double kFloat16Tolerance = 0.015;
// float64 against a float64 reference that transformers computed in float64 throughout: the
// same arithmetic in another order (worst measured: see README, "Precision"). The other
// references hold float32 steps (transformers' RMSNorm and rotary tables, float32 softmax)
// or are stored as float32, and are held to kFloat32Tolerance.
constexpr double kFloat64Tolerance = 1e-9;
double float64Tolerance(const std::string& golden);

// One parity check per (fixture, compute dtype, device): each architecture's test file
// instantiates GoldenParity with its fixtures through goldenCases(). The tolerances are
// the CPU's on every device: the GPU's own rounding is to be measured there first.
struct GoldenCase {
  std::string model;
  std::string golden;
  bool causal = false;
  std::string dtype;
  std::string device = "cpu";
  // Where model and golden are: ../shared's fixtures, hfFixtureDir(model), or a real
  // checkpoint (realModelDir(model)) with tests/fixtures/real/<golden>.golden.safetensors.
  enum class Source { kShared, kHf, kReal } source = Source::kShared;
};
void PrintTo(const GoldenCase& c, std::ostream* os);
class GoldenParity : public ::testing::TestWithParam<GoldenCase> {};
// The fixture under float32, bfloat16, float16 and float64, on each of testDevices().
std::vector<GoldenCase> goldenCases(const std::string& model, const std::string& golden, bool causal = false);
// The same for a Hugging Face fixture, and for a real checkpoint.
std::vector<GoldenCase> hfGoldenCases(const std::string& name);
std::vector<GoldenCase> realGoldenCases(const std::string& name);
std::string goldenCaseName(const ::testing::TestParamInfo<GoldenCase>& info);

}  // namespace posgeom::testing
