#include "posgeom/pass/activations_pass.h"

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

}  // namespace
}  // namespace posgeom::testing
