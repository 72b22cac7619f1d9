#include "posgeom/hub/model_source.h"

#include "input_error.h"
#include "local_hub.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

struct SourceCase {
  LocalHub hub{oneRepo("org/m", defaultModelDir())};
  ScratchDir cache;
  std::map<std::string, std::string> vars{{"HF_ENDPOINT", hub.endpoint()}, {"HF_HUB_CACHE", cache.path().string()}};
  fs::path resolve(hub::ModelParts parts = hub::ModelParts::kWeights, const std::string& revision = "") {
    return hub::modelDirectory("org/m", revision, parts, envOf(vars));
  }
};

TEST(ModelSource, DownloadsWhatIsMissingThenReadsTheCacheAlone) {
  SourceCase c;
  const auto dir = c.resolve();
  EXPECT_TRUE(hub::holdsParts(dir, hub::ModelParts::kWeights));
  EXPECT_EQ(dir.parent_path().parent_path(), c.cache / "models--org--m");
  c.hub.clearRequests();
  EXPECT_EQ(c.resolve(), dir);
  EXPECT_EQ(c.hub.requests().size(), 0u);  // cached: the hub is not asked
}

TEST(ModelSource, ATokenizerSnapshotGetsItsWeightsWhenAskedFor) {
  SourceCase c;
  const auto dir = c.resolve(hub::ModelParts::kTokenizer);
  EXPECT_FALSE(fs::exists(dir / "model.safetensors"));
  EXPECT_EQ(c.hub.count("/cdn/"), 0);
  c.hub.clearRequests();
  EXPECT_EQ(c.resolve(hub::ModelParts::kWeights), dir);
  EXPECT_EQ(c.hub.count("GET /cdn/"), 1);
  EXPECT_EQ(c.hub.count("GET /org/m/resolve/"), 0);  // the small files were there
}

TEST(ModelSource, OfflineNeverConnects) {
  SourceCase c;
  c.vars["HF_HUB_OFFLINE"] = "1";
  const std::string message = inputErrorOf([&] { c.resolve(); });
  EXPECT_EQ(message.rfind("org/m: not a directory, and not in the Hugging Face cache", 0), 0u) << message;
  EXPECT_NE(message.find("HF_HUB_OFFLINE is set"), std::string::npos) << message;
  EXPECT_NE(message.find("posgeom download org/m"), std::string::npos) << message;
  EXPECT_EQ(c.hub.requests().size(), 0u);
  c.vars.erase("HF_HUB_OFFLINE");
  const auto dir = c.resolve();
  c.vars["HF_HUB_OFFLINE"] = "1";
  EXPECT_EQ(c.resolve(), dir);  // offline with the model cached: fine
  c.vars["HF_ENDPOINT"] = "garbage";
  c.vars["HF_TOKEN_PATH"] = c.cache.path().string();  // a directory: unusable, and not needed
  EXPECT_EQ(c.resolve(), dir);
  c.vars.erase("HF_HUB_OFFLINE");
  EXPECT_EQ(c.resolve(), dir);  // online too: a cached model needs no setting of the hub's
}

TEST(ModelSource, OfflineASnapshotWithoutWeightsIsSaidAsSuch) {
  SourceCase c;
  const auto dir = c.resolve(hub::ModelParts::kTokenizer);
  c.vars["HF_HUB_OFFLINE"] = "1";
  c.hub.clearRequests();
  EXPECT_EQ(c.resolve(hub::ModelParts::kTokenizer), dir);
  EXPECT_INPUT_ERROR(c.resolve(hub::ModelParts::kWeights), "org/m: the Hugging Face cache's snapshot " + dir.string() + " lacks weights");
  EXPECT_EQ(c.hub.requests().size(), 0u);
}

TEST(ModelSource, TheConfigFirstThenTheWeightsAndOnlyThenTheRef) {
  SourceCase c;
  const auto dir = c.resolve(hub::ModelParts::kConfig);
  EXPECT_TRUE(fs::exists(dir / "config.json"));
  EXPECT_FALSE(fs::exists(dir / "model.safetensors"));
  EXPECT_FALSE(fs::exists(c.cache / "models--org--m/refs/main"));  // a run cut here names no half snapshot
  EXPECT_EQ(hub::withWeights("org/m", "", dir, envOf(c.vars)), dir);
  EXPECT_EQ(readFile(dir / "model.safetensors"), readFile(defaultModelDir() / "model.safetensors"));
  EXPECT_EQ(readFile(c.cache / "models--org--m/refs/main"), dir.filename().string());
  // A directory is the caller's as it is; no hub is asked.
  c.hub.clearRequests();
  EXPECT_EQ(hub::withWeights(defaultModelDir().string(), "", defaultModelDir(), envOf(c.vars)), defaultModelDir());
  EXPECT_EQ(c.hub.requests().size(), 0u);
}

TEST(ModelSource, ATokenizerOnlyRepositoryServesTokenize) {
  ScratchDir s;
  fs::create_directories(s / "tok");
  fs::copy_file(defaultModelDir() / "tokenizer.json", s / "tok/tokenizer.json");
  LocalHub hub(oneRepo("org/tok", s / "tok"));
  const auto vars = envOf({{"HF_ENDPOINT", hub.endpoint()}, {"HF_HUB_CACHE", (s / "cache").string()}});
  const auto dir = hub::modelDirectory("org/tok", "", hub::ModelParts::kTokenizer, vars);
  EXPECT_EQ(readFile(dir / "tokenizer.json"), readFile(defaultModelDir() / "tokenizer.json"));
  EXPECT_INPUT_ERROR(hub::modelDirectory("org/tok", "", hub::ModelParts::kWeights, vars),
                     "org/tok: the repository has no config.json");
}

TEST(ModelSource, AnInterruptedHuggingFaceDownloadIsCompleted) {
  SourceCase c;
  const auto dir = c.resolve();
  const auto blob = fs::canonical(dir / "model.safetensors");
  fs::remove(blob);  // a link to a missing blob, as a killed download leaves
  EXPECT_EQ(c.resolve(), dir);
  EXPECT_TRUE(fs::exists(blob));
}

TEST(ModelSource, DirectoriesAndPathsAreNeverLookedUpOnTheHub) {
  SourceCase c;
  EXPECT_EQ(hub::modelDirectory(defaultModelDir().string(), "", hub::ModelParts::kWeights, envOf(c.vars)), defaultModelDir());
  EXPECT_INPUT_ERROR(hub::modelDirectory("./absent/dir", "", hub::ModelParts::kWeights, envOf(c.vars)),
                     "./absent/dir: model directory does not exist");
  EXPECT_EQ(c.hub.requests().size(), 0u);
}

}  // namespace
}  // namespace posgeom::testing
