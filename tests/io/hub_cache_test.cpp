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

// --revision as from_pretrained(revision=...): a branch or tag under refs/, a commit, or a
// unique prefix of one (Pythia's training steps are branches: step143000).
TEST(HubCache, RevisionsAreRefsCommitsOrUniquePrefixes) {
  ScratchDir s;
  const auto repo = s / "models--EleutherAI--pythia-70m";
  const std::string main_commit = "1111111aaaa", step_commit = "2222222bbbb", other = "2222222cccc";
  for (const auto& c : {main_commit, step_commit, other}) fs::create_directories(repo / "snapshots" / c);
  fs::create_directories(repo / "refs");
  writeFile(repo / "refs" / "main", main_commit);
  writeFile(repo / "refs" / "step143000", step_commit);
  const auto env = fakeEnv({{"HF_HUB_CACHE", s.path().string()}});
  const std::string name = "EleutherAI/pythia-70m";
  EXPECT_EQ(io::resolveModelDir(name, env, "step143000"), repo / "snapshots" / step_commit);
  EXPECT_EQ(io::resolveModelDir(name, env, other), repo / "snapshots" / other);
  EXPECT_EQ(io::resolveModelDir(name, env, "1111111"), repo / "snapshots" / main_commit);
  EXPECT_EQ(io::snapshotCommit(io::resolveModelDir(name, env, "step143000")), step_commit);
  EXPECT_EQ(io::snapshotCommit(io::resolveModelDir(name, env)), main_commit);
  EXPECT_EQ(io::snapshotCommit(s.path()), "");
  for (const std::string bad : {"step1", "2222222", "../refs/main"}) {
    try {
      io::resolveModelDir(name, env, bad);
      ADD_FAILURE() << bad << " must be refused";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--revision: '" + bad + "'", 0), 0u) << what;
      EXPECT_NE(what.find("main, step143000"), std::string::npos) << what;  // what there is
    }
  }
  try {
    io::resolveModelDir(s.path().string(), env, "main");
    ADD_FAILURE() << "a directory has no revisions";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("applies to a hub name"), std::string::npos) << e.what();
  }
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
