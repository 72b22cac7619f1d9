#include "posgeom/model/load/loader.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

std::string loadError(const std::filesystem::path& dir) {
  try {
    model::loadModel(dir, model::Numerics::parse("float32", "cpu"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Loader, MissingDirectory) {
  EXPECT_NE(loadError("/nonexistent/model").find("does not exist"), std::string::npos);
}

TEST(Loader, DirectoryWithoutConfig) {
  ScratchDir s;
  EXPECT_NE(loadError(s.path()).find("missing config.json"), std::string::npos);
}

TEST(Loader, TensorOfTheWrongShapeForTheConfig) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto dir = copyFixtureModel("tiny-gpt2", s.path());
  auto config = readFile(dir / "config.json");
  config.replace(config.find("\"n_positions\": 128"), 18, "\"n_positions\": 256");
  writeFile(dir / "config.json", config);
  const auto msg = loadError(dir);
  EXPECT_NE(msg.find("model.safetensors: tensor 'wpe.weight' has shape [128, 64]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("implies [256, 64]"), std::string::npos) << msg;
}

TEST(Loader, MissingTensorIsNamed) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  const auto dir = copyFixtureModel("tiny-llama", s.path());
  auto config = readFile(dir / "config.json");
  config.replace(config.find("\"num_hidden_layers\": 3"), 22, "\"num_hidden_layers\": 4");
  writeFile(dir / "config.json", config);
  EXPECT_NE(loadError(dir).find("missing tensor 'layers.3.input_layernorm.weight'"), std::string::npos);
}

}  // namespace
}  // namespace posgeom::testing
