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
      {[](nlohmann::json& c) { c["rope_parameters"]["rope_type"] = "yarn"; }, "RoPE of type 'yarn'"},
      {[](nlohmann::json& c) { c["rope_parameters"]["partial_rotary_factor"] = 1.5; }, "partial_rotary_factor"},
      {[](nlohmann::json& c) {
         c.erase("rope_parameters");
         c["rope_scaling"] = {{"type", "longrope"}, {"factor", 2.0}};
       },
       "RoPE of type 'longrope'"},
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

}  // namespace
}  // namespace posgeom::testing
