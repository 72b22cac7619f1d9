#include "posgeom/hub/repo_files.h"

#include "input_error.h"
#include "local_hub.h"

namespace posgeom::testing {
namespace {

using Files = std::vector<std::string>;

TEST(RepoFiles, SafePathsStayInside) {
  for (const char* ok : {"config.json", "onnx/model.onnx", "a.b/c"}) EXPECT_TRUE(hub::isSafeRepoPath(ok)) << ok;
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/", "a\\b", "a\nb"})
    EXPECT_FALSE(hub::isSafeRepoPath(bad)) << bad;
}

TEST(RepoFiles, ConfigsAndTokenizersButNotOtherFiles) {
  const Files repo{"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "merges.txt", "vocab.json",
                   "tokenizer.model", "README.md", ".gitattributes", "onnx/config.json", "original/params.json",
                   "model.safetensors", "pytorch_model.bin", "pytorch_model.bin.index.json", "consolidated.safetensors"};
  EXPECT_EQ(hub::configFiles("o/m", repo), (Files{"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                                                  "merges.txt", "vocab.json", "tokenizer.model"}));
  EXPECT_EQ(hub::weightFiles("o/m", repo, ""), Files{"model.safetensors"});
}

TEST(RepoFiles, ShardsAreWhatTheIndexNames) {
  ScratchDir s;
  writeFile(s / "model.safetensors.index.json",
            R"({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
                "c": "model-00002-of-00002.safetensors"}})");
  const Files repo{"config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors",
                   "model-00002-of-00002.safetensors", "consolidated.safetensors", "pytorch_model.bin"};
  EXPECT_EQ(hub::weightIndexFile(repo), "model.safetensors.index.json");
  EXPECT_EQ(hub::weightFiles("o/m", repo, s.path()), (Files{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}));
  // An index naming a shard the repository lacks, or one outside it, is refused by name.
  EXPECT_INPUT_ERROR(hub::weightFiles("o/m", Files{"config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors"},
                                      s.path()),
                     "o/m: model.safetensors.index.json names the shard model-00002-of-00002.safetensors");
  writeFile(s / "model.safetensors.index.json", R"({"weight_map": {"a": "../../escape.safetensors"}})");
  EXPECT_THROW(hub::weightFiles("o/m", repo, s.path()), InputError);
}

TEST(RepoFiles, PytorchBinOnlyWithoutSafetensors) {
  EXPECT_EQ(hub::weightFiles("o/m", Files{"config.json", "pytorch_model.bin"}, ""), Files{"pytorch_model.bin"});
  EXPECT_EQ(hub::configFiles("o/m", Files{"config.json", "pytorch_model.bin.index.json"}),
            (Files{"config.json", "pytorch_model.bin.index.json"}));
  EXPECT_INPUT_ERROR(hub::weightFiles("o/m", Files{"config.json", "README.md"}, ""), "o/m: the repository has no weights");
  EXPECT_INPUT_ERROR(hub::configFiles("o/m", Files{"model.safetensors"}), "o/m: the repository has no config.json");
}

TEST(RepoFiles, IncludeGlobsChooseExactly) {
  const Files repo{"config.json", "tokenizer.json", "model.safetensors", "onnx/model.onnx", "../evil.json"};
  EXPECT_EQ(hub::filesMatching("o/m", repo, {"*.json"}), (Files{"config.json", "tokenizer.json"}));
  EXPECT_EQ(hub::filesMatching("o/m", repo, {"onnx/*", "model.*"}), (Files{"model.safetensors", "onnx/model.onnx"}));
  EXPECT_INPUT_ERROR(hub::filesMatching("o/m", repo, {"*.gguf"}), "--include: '*.gguf' matches no file of o/m");
}

}  // namespace
}  // namespace posgeom::testing
