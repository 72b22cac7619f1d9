#include "posgeom/io/hub_cache.h"

#include <map>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

io::EnvLookup fakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const char* key) -> std::optional<std::string> {
    const auto it = vars.find(key);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(HubCache, RootFollowsHuggingFacePrecedence) {
  EXPECT_EQ(io::hubCacheRoot(fakeEnv({{"HF_HUB_CACHE", "/a"}, {"HF_HOME", "/b"}})), fs::path("/a"));
  EXPECT_EQ(io::hubCacheRoot(fakeEnv({{"HF_HOME", "/b"}})), fs::path("/b/hub"));
  EXPECT_EQ(io::hubCacheRoot(fakeEnv({{"HOME", "/home/u"}})), fs::path("/home/u/.cache/huggingface/hub"));
}

TEST(HubCache, ResolvesRefsMainForOrgAndName) {
  ScratchDir s;
  const auto repo = s / "models--meta-llama--Llama-2-7b-hf";
  fs::create_directories(repo / "snapshots" / "abc123");
  fs::create_directories(repo / "snapshots" / "zzz999");
  fs::create_directories(repo / "refs");
  writeFile(repo / "refs" / "main", "abc123");
  const auto dir = io::resolveModelDir("meta-llama/Llama-2-7b-hf", fakeEnv({{"HF_HUB_CACHE", s.path().string()}}));
  EXPECT_EQ(dir, repo / "snapshots" / "abc123");
}

TEST(HubCache, FallsBackToTheOnlySnapshot) {
  ScratchDir s;
  fs::create_directories(s / "hub" / "models--gpt2" / "snapshots" / "r1");
  const auto dir = io::resolveModelDir("gpt2", fakeEnv({{"HF_HOME", s.path().string()}}));
  EXPECT_EQ(dir, s / "hub" / "models--gpt2" / "snapshots" / "r1");
}

TEST(HubCache, ADirectoryIsUsedAsIs) {
  ScratchDir s;
  EXPECT_EQ(io::resolveModelDir(s.path().string(), fakeEnv({})), s.path());
}

TEST(HubCache, MissingModelSaysWhereItLookedAndHowToDownload) {
  ScratchDir s;
  try {
    io::resolveModelDir("gpt2", fakeEnv({{"HF_HUB_CACHE", s.path().string()}}));
    FAIL();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find((s / "models--gpt2").string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("huggingface-cli download gpt2"), std::string::npos) << msg;
  }
}

TEST(HubCache, MissingPathIsNotLookedUpInTheCache) {
  try {
    io::resolveModelDir("/no/such/dir", fakeEnv({}));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model directory does not exist"), std::string::npos);
  }
}

}  // namespace
}  // namespace posgeom::testing
