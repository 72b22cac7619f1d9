#include <nlohmann/json.hpp>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// hf-llama (saved by transformers 5, RoPE in rope_parameters) with its config edited.
std::filesystem::path llamaWith(const ScratchDir& s, const std::function<void(nlohmann::json&)>& edit) {
  return editedHfFixture(s.path(), "hf-llama", edit);
}

model::ModelConfig loadConfig(const std::filesystem::path& dir) {
  return model::loadModel(dir, model::Numerics::parse("float32", "cpu")).model->config();
}

// Where transformers 5 keeps RoPE's base: a Llama-3 checkpoint's 500000 must not be read
// as the default 10000.
TEST(LlamaStyle, RopeThetaFromRopeParametersOrTheOlderKey) {
  ScratchDir a, b;
  EXPECT_EQ(loadConfig(llamaWith(a, [](nlohmann::json& c) { c["rope_parameters"]["rope_theta"] = 500000.0; })).rope.theta,
            500000.0);
  EXPECT_EQ(loadConfig(llamaWith(b, [](nlohmann::json& c) {
              c.erase("rope_parameters");
              c["rope_theta"] = 250000.0;
            })).rope.theta,
            250000.0);
}

// A rotation posgeom does not read would put other positions into the model than its own:
// refused by name, in either config format, as are scalings without their parameters.
TEST(LlamaStyle, UnreadRopeVariantsAreRefusedByName) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& c) { c["rope_parameters"]["rope_type"] = "mrope"; }, "RoPE of type 'mrope'"},
      {[](nlohmann::json& c) { c["rope_parameters"].update({{"rope_type", "yarn"}, {"factor", -2.0}}); },
       "rope_parameters.factor must be a positive number"},
      {[](nlohmann::json& c) { c["rope_parameters"]["partial_rotary_factor"] = 1.5; }, "partial_rotary_factor"},
      {[](nlohmann::json& c) {
         c.erase("rope_parameters");
         c["rope_scaling"] = {{"type", "su"}, {"factor", 2.0}};
       },
       "RoPE of type 'su'"},
      {[](nlohmann::json& c) { c["rope_parameters"].update({{"rope_type", "llama3"}, {"factor", 8.0}}); },
       "rope_parameters.low_freq_factor must be a positive number"},
      {[](nlohmann::json& c) {
         c.erase("rope_parameters");
         c["rope_scaling"] = {{"type", "linear"}};
       },
       "rope_scaling.factor must be a positive number"},
  };
  for (const auto& [edit, message] : cases) {
    ScratchDir s;
    const auto dir = llamaWith(s, edit);
    try {
      loadConfig(dir);
      ADD_FAILURE() << message << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
    }
  }
  ScratchDir s;  // rope_scaling: null is the plain rotation
  EXPECT_EQ(loadConfig(llamaWith(s, [](nlohmann::json& c) { c["rope_scaling"] = nullptr; })).rope.theta, 10000.0);
}

// The neuron circuit against the model's own forward, where a window repeats one token: with
// no position embedding every attention input is the token's normed embedding, and whatever
// the attention weights, the block adds W_O W_V x (+ constants) to the stream. Two tokens'
// difference cancels the constants (Qwen2's value bias).
class NeuronCircuitOf : public ::testing::TestWithParam<std::string> {};

TEST_P(NeuronCircuitOf, MatchesTheForwardWhereContentIsConstant) {
  const auto loaded = model::loadModel(hfFixtureDir(GetParam()), model::Numerics::parse("float32", "cpu"));
  const auto& m = *loaded.model;
  const auto circuit = m.neuronCircuit(8);
  ASSERT_TRUE(circuit.has_value());
  struct Capture : model::LayerObserver {
    at::Tensor h0, x, u;
    void onHidden(int64_t layer, const at::Tensor& h) override {
      if (layer == 0) h0 = h[0].to(at::kDouble);
    }
    void onAttentionInput(int64_t block, const at::Tensor& a) override {
      if (block == 0) x = a[0].to(at::kDouble);
    }
    void onMlpInput(int64_t block, const at::Tensor& v) override {
      if (block == 0) u = v[0].to(at::kDouble);
    }
  };
  std::vector<Capture> runs(2);
  const int64_t tokens[2] = {3, 11};
  for (int r = 0; r < 2; ++r) {
    model::ForwardRequest request;
    request.ids = at::full({1, 8}, tokens[r], at::TensorOptions().dtype(at::kLong));
    request.last_layer = 1;
    request.observer = &runs[static_cast<std::size_t>(r)];
    m.forward(request);
    ASSERT_TRUE(runs[static_cast<std::size_t>(r)].u.defined());
    const auto expected = circuit->token_inputs[tokens[r]].to(at::kDouble);
    EXPECT_LT((runs[static_cast<std::size_t>(r)].x[5] - expected).abs().max().item<double>(), 1e-5) << GetParam();
  }
  const auto dx = runs[0].x[7] - runs[1].x[7];
  auto predicted = at::zeros_like(dx);
  for (int64_t h = 0; h < circuit->wv.size(0); ++h)
    predicted += at::mv(circuit->wo[h].to(at::kDouble), at::mv(circuit->wv[h].to(at::kDouble), dx));
  const auto actual = (runs[0].u[7] - runs[0].h0[7]) - (runs[1].u[7] - runs[1].h0[7]);
  EXPECT_LT((actual - predicted).abs().max().item<double>(), 1e-4 * (1 + actual.abs().max().item<double>())) << GetParam();
  EXPECT_EQ(circuit->w_in.size(0), m.config().intermediate_size);
}

INSTANTIATE_TEST_SUITE_P(HfFamilies, NeuronCircuitOf,
                         ::testing::Values("hf-llama", "hf-mistral", "hf-qwen2", "hf-qwen3", "hf-gemma", "hf-phi3",
                                           "hf-granite", "hf-smollm3", "hf-stablelm",
                                           "hf-starcoder2"));

// Where the linearisation does not hold, no circuit: Gemma-2's sandwich norms, OLMo's clamp.
TEST(LlamaStyle, NoNeuronCircuitWithSandwichNormsOrAClamp) {
  for (const char* name : {"hf-gemma2", "hf-olmo"})
    EXPECT_FALSE(model::loadModel(hfFixtureDir(name), model::Numerics::parse("float32", "cpu")).model->neuronCircuit(8).has_value())
        << name;
}

}  // namespace
}  // namespace posgeom::testing
