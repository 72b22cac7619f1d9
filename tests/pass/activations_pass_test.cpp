#include "posgeom/pass/activations_pass.h"

#include <limits>

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors_writer.h"
#include "anova_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// hidden.<l> [N, T, d] of float32 written from the fixture's sequences.
void writeLayers(const std::filesystem::path& path, const std::vector<Sequences>& layers) {
  io::SafetensorsWriter w;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& h = layers[l];
    std::vector<float> values;
    for (const auto& c : h)
      for (Eigen::Index t = 0; t < c.rows(); ++t)
        for (Eigen::Index j = 0; j < c.cols(); ++j) values.push_back(static_cast<float>(c(t, j)));
    w.addF32("hidden." + std::to_string(l), {static_cast<int64_t>(h.size()), h[0].rows(), h[0].cols()}, values);
  }
  w.write(path);
}

TEST(ActivationsPass, ReducesEveryLayerToTheDirectStatistics) {
  ScratchDir s;
  auto a = randomSequences(7, 9, 5, 1), b = randomSequences(7, 9, 5, 2);
  for (auto* h : {&a, &b})
    for (auto& c : *h) c = c.cast<float>().cast<double>();  // as stored
  writeLayers(s / "h.safetensors", {a, b});
  pass::AnalyzeOptions o;
  o.activations = s / "h.safetensors";
  o.batch_size = 3;
  o.report.screenot_k = 1;  // P is 8 x 5
  const auto state = pass::analyzeActivations(o);
  EXPECT_EQ(state.windows, 7);
  EXPECT_EQ(state.settings["source"], "activations");
  EXPECT_EQ(state.settings["seq_len"], 9);
  ASSERT_EQ(state.layers.size(), 2u);
  const auto direct = directStatistics(b, 1, 1);
  EXPECT_EQ(state.layers[1].sequences, 7);
  // Each batch is reduced in float32 before the float64 running sums (the accumulators' rule).
  EXPECT_LT((state.layers[1].position_sum - direct.position_sum).norm(), 1e-6 * direct.position_sum.norm());
  EXPECT_LT((state.layers[1].second_moment - direct.second_moment).norm(), 1e-6 * direct.second_moment.norm());
}

// --layer-cosines over hidden states made elsewhere: each batch's layers come in turn.
TEST(ActivationsPass, LayerCosinesOfTheFilesHiddenStates) {
  ScratchDir s;
  auto a = randomSequences(5, 6, 5, 3), b = a;
  for (auto& c : b) c = c + 0.5 * Eigen::MatrixXd::Random(c.rows(), c.cols());
  for (auto* h : {&a, &b})
    for (auto& c : *h) c = c.cast<float>().cast<double>();
  writeLayers(s / "h.safetensors", {a, b});
  pass::AnalyzeOptions o;
  o.activations = s / "h.safetensors";
  o.batch_size = 2;
  o.report.screenot_k = 1;
  EXPECT_FALSE(pass::analyzeActivations(o).layers[1].layer_cosines);
  o.layer_cosines = true;
  const auto state = pass::analyzeActivations(o);
  double sum = 0;
  for (std::size_t c = 0; c < a.size(); ++c)
    for (Eigen::Index t = 1; t < 6; ++t) sum += a[c].row(t).dot(b[c].row(t)) / (a[c].row(t).norm() * b[c].row(t).norm());
  ASSERT_EQ(state.layers[1].earlier_cosine_sums.size(), 1);
  EXPECT_NEAR(state.layers[1].earlier_cosine_sums[0], sum, 1e-6 * 25);
}

TEST(ActivationsPass, NamesTheFileForWhatItCannotRead) {
  ScratchDir s;
  io::SafetensorsWriter w;
  w.addF32("other", {1}, {1.0f});
  w.write(s / "none.safetensors");
  pass::AnalyzeOptions o;
  o.activations = s / "none.safetensors";
  try {
    pass::analyzeActivations(o);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds neither 'hidden' nor 'hidden.0'"), std::string::npos);
  }
  writeLayers(s / "short.safetensors", {randomSequences(2, 3, 4, 1)});
  o.activations = s / "short.safetensors";
  o.skip_first = 3;
  EXPECT_THROW(pass::analyzeActivations(o), InputError);
}

std::string activationsError(const pass::AnalyzeOptions& o) {
  try {
    pass::analyzeActivations(o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// hidden.<name> [2, 9, 5] of float32, each filled with `value`.
void writeNamed(const std::filesystem::path& path, const std::vector<std::string>& names, float value = 0.5f) {
  io::SafetensorsWriter w;
  for (const auto& name : names) w.addF32(name, {2, 9, 5}, std::vector<float>(90, value));
  w.write(path);
}

// A gap used to end the layers there: hidden.3 and hidden.9 were dropped without a word.
TEST(ActivationsPass, AGapInTheNumberingIsRefusedNamingTheMissingState) {
  ScratchDir s;
  writeNamed(s / "gap.safetensors", {"hidden.0", "hidden.1", "hidden.3", "hidden.9"});
  pass::AnalyzeOptions o;
  o.activations = s / "gap.safetensors";
  o.report.screenot_k = 1;
  EXPECT_EQ(activationsError(o), (s / "gap.safetensors").string() +
                                     ": has no 'hidden.2' but has hidden.3, hidden.9: the hidden states must be numbered 0, 1, "
                                     "2, ... without a gap");
  writeNamed(s / "no0.safetensors", {"hidden.1", "hidden.2"});
  o.activations = s / "no0.safetensors";
  EXPECT_NE(activationsError(o).find("holds neither 'hidden' nor 'hidden.0' (it has hidden.1, hidden.2)"), std::string::npos);
}

// "hidden.01" beside "hidden.1" (or "hidden.x") names no hidden state for sure: refused, not ignored.
TEST(ActivationsPass, NamesThatAreNotAHiddenStateIndexAreRefused) {
  ScratchDir s;
  pass::AnalyzeOptions o;
  o.report.screenot_k = 1;
  for (const std::string odd : {"hidden.01", "hidden.x", "hidden.-1", "hidden."}) {
    writeNamed(s / "odd.safetensors", {"hidden.0", odd});
    o.activations = s / "odd.safetensors";
    EXPECT_NE(activationsError(o).find(": '" + odd + "' is not a hidden state's name"), std::string::npos) << odd;
  }
  writeNamed(s / "both.safetensors", {"hidden.0"});
  io::SafetensorsWriter w;
  w.addF32("hidden", {1, 2, 9, 5}, std::vector<float>(90, 0.5f));
  w.addF32("hidden.0", {2, 9, 5}, std::vector<float>(90, 0.5f));
  w.write(s / "both.safetensors");
  o.activations = s / "both.safetensors";
  EXPECT_NE(activationsError(o).find("holds both 'hidden' and 'hidden.<l>'"), std::string::npos);
  // What forward writes beside the hidden states is not analysed, and not refused.
  writeNamed(s / "forward.safetensors", {"hidden.0", "hidden.1", "final_norm", "logits"});
  o.activations = s / "forward.safetensors";
  EXPECT_EQ(pass::analyzeActivations(o).layers.size(), 2u);
}

// [1, 0, 16, 4] used to reach the end stage and fail there as an internal error (exit 3).
TEST(ActivationsPass, NoSequencesIsBadInputNamingTheFile) {
  ScratchDir s;
  io::SafetensorsWriter w;
  w.addF32("hidden", {1, 0, 16, 4}, {});
  w.write(s / "empty.safetensors");
  pass::AnalyzeOptions o;
  o.activations = s / "empty.safetensors";
  o.report.screenot_k = 1;
  EXPECT_EQ(activationsError(o),
            (s / "empty.safetensors").string() + ": holds no sequences: its hidden states are [1, 0, 16, 4] [L, N, T, d], N = 0");
  io::SafetensorsWriter none;
  none.addF32("hidden", {0, 2, 16, 4}, {});
  none.write(s / "none.safetensors");
  o.activations = s / "none.safetensors";
  EXPECT_NE(activationsError(o).find("no hidden states (L = 0)"), std::string::npos);
}

// The file holds the NaN (no --dtype to blame), or finite values whose squares overflow.
TEST(ActivationsPass, NonFiniteStatisticsSayWhatTheFileHolds) {
  ScratchDir s;
  pass::AnalyzeOptions o;
  o.report.screenot_k = 1;
  writeNamed(s / "big.safetensors", {"hidden.0", "hidden.1"}, 1e30f);
  o.activations = s / "big.safetensors";
  const auto big = activationsError(o);
  EXPECT_EQ(big.rfind((s / "big.safetensors").string() + ": holds values up to 1e+30 at hidden state 0 (in sequences 0..1): finite, "
                                                         "but their squares overflow float32",
                      0),
            0u)
      << big;
  EXPECT_EQ(big.find("--dtype"), std::string::npos);
  io::SafetensorsWriter w;
  std::vector<float> values(90, 0.5f);
  values[50] = std::numeric_limits<float>::quiet_NaN();
  w.addF32("hidden.0", {2, 9, 5}, std::vector<float>(90, 0.5f));
  w.addF32("hidden.1", {2, 9, 5}, values);
  w.write(s / "nan.safetensors");
  o.activations = s / "nan.safetensors";
  EXPECT_EQ(activationsError(o), (s / "nan.safetensors").string() + ": holds NaN or Inf at hidden state 1 (in sequences 0..1)");
}

// A default --screenot-k (20) is cut to fit the file's 8 positions x 5 dims; a given one is not.
TEST(ActivationsPass, OnlyAGivenScreeNotBoundThatDoesNotFitIsAnError) {
  ScratchDir s;
  writeLayers(s / "h.safetensors", {randomSequences(4, 9, 5, 1)});
  pass::AnalyzeOptions o;
  o.activations = s / "h.safetensors";
  EXPECT_EQ(pass::analyzeActivations(o).windows, 4);
  o.report.screenot_k_given = true;
  EXPECT_EQ(activationsError(o), "--screenot-k: 20 is too large: it must be below min(rows, cols) = 5");
}

}  // namespace
}  // namespace posgeom::testing
