#include "posgeom/io/checkpoint.h"

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors_writer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

std::string openError(const fs::path& dir) {
  try {
    io::Checkpoint::open(dir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Checkpoint, ReadsShardsThroughTheIndex) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  const auto c = io::Checkpoint::open(sharedDir() / "fixtures/models/tiny-llama");
  EXPECT_EQ(c.files().size(), 2u);
  ASSERT_NE(c.find("lm_head.weight"), nullptr);
  EXPECT_NE(c.fileOf("lm_head.weight").find("model-00002-of-00002"), std::string::npos);
  EXPECT_NE(c.find("model.embed_tokens.weight"), nullptr);
  EXPECT_EQ(c.find("nope"), nullptr);
}

TEST(Checkpoint, MissingShardIsNamed) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  const auto dir = copyFixtureModel("tiny-llama", s.path());
  fs::remove(dir / "model-00002-of-00002.safetensors");
  EXPECT_NE(openError(dir).find("shard 'model-00002-of-00002.safetensors' listed in weight_map does not exist"),
            std::string::npos);
}

TEST(Checkpoint, IndexThatPointsAtTheWrongShard) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  const auto dir = copyFixtureModel("tiny-llama", s.path());
  auto index = readFile(dir / "model.safetensors.index.json");
  const std::string entry = R"("lm_head.weight": "model-00002-of-00002.safetensors")";
  const auto at = index.find(entry);
  ASSERT_NE(at, std::string::npos);
  index.replace(at, entry.size(), R"("lm_head.weight": "model-00001-of-00002.safetensors")");
  writeFile(dir / "model.safetensors.index.json", index);
  EXPECT_NE(openError(dir).find("'lm_head.weight' listed in model.safetensors.index.json is not in this shard"),
            std::string::npos);
}

TEST(Checkpoint, IndexMayNotEscapeTheDirectory) {
  ScratchDir s;
  writeFile(s / "model.safetensors.index.json", R"({"weight_map": {"w": "../other.safetensors"}})");
  EXPECT_NE(openError(s.path()).find("outside the model directory"), std::string::npos);
}

// transformers loads model.safetensors when an index lies beside it (a stale one, or another
// model's): so does this, so that both give the same model.
TEST(Checkpoint, ModelSafetensorsWinsOverAnIndexBesideIt) {
  ScratchDir s;
  io::SafetensorsWriter w;
  w.addF32("single", {2}, {1.0F, 2.0F});
  w.write(s / "model.safetensors");
  io::SafetensorsWriter shard;
  shard.addF32("sharded", {1}, {3.0F});
  shard.write(s / "model-00001-of-00001.safetensors");
  writeFile(s / "model.safetensors.index.json",
            R"({"weight_map": {"sharded": "model-00001-of-00001.safetensors", "gone": "model-00002-of-00002.safetensors"}})");
  const auto c = io::Checkpoint::open(s.path());
  EXPECT_EQ(c.names(), std::vector<std::string>{"single"});
  EXPECT_EQ(io::countCheckpointTensors(s.path()), 1);
}

TEST(Checkpoint, AnEmptyWeightMapIsTheIndexsFault) {
  ScratchDir s;
  writeFile(s / "model.safetensors.index.json", R"({"metadata": {}, "weight_map": {}})");
  EXPECT_NE(openError(s.path()).find("model.safetensors.index.json: weight_map is empty"), std::string::npos)
      << openError(s.path());
  // Not counted as 0 tensors, which the config check would blame on config.json.
  EXPECT_EQ(io::countCheckpointTensors(s.path()), std::nullopt);
}

TEST(Checkpoint, PytorchBinOnlyExplainsHowToConvert) {
  ScratchDir s;
  writeFile(s / "pytorch_model.bin", "PK");
  const auto msg = openError(s.path());
  EXPECT_NE(msg.find("pytorch_model.bin"), std::string::npos);
  EXPECT_NE(msg.find("save_file"), std::string::npos);
}

TEST(Checkpoint, NoWeightsAtAll) {
  ScratchDir s;
  EXPECT_NE(openError(s.path()).find("no model weights found"), std::string::npos);
}

}  // namespace
}  // namespace posgeom::testing
