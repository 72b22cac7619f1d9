#include "posgeom/io/hub_cache.h"

#include <chrono>
#include <map>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(HubCache, RootFollowsHuggingFacePrecedence) {
  EXPECT_EQ(io::hubCacheRoot(envOf({{"HF_HUB_CACHE", "/a"}, {"HF_HOME", "/b"}})), fs::path("/a"));
  EXPECT_EQ(io::hubCacheRoot(envOf({{"HF_HOME", "/b"}})), fs::path("/b/hub"));
  EXPECT_EQ(io::hubCacheRoot(envOf({{"HOME", "/home/u"}})), fs::path("/home/u/.cache/huggingface/hub"));
  // huggingface_hub's other spellings: the older HUGGINGFACE_HUB_CACHE, XDG_CACHE_HOME, and "~".
  EXPECT_EQ(io::hubCacheRoot(envOf({{"HUGGINGFACE_HUB_CACHE", "/old"}, {"HF_HOME", "/b"}})), fs::path("/old"));
  EXPECT_EQ(io::hubCacheRoot(envOf({{"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}})), fs::path("/xdg/huggingface/hub"));
  EXPECT_EQ(io::hubCacheRoot(envOf({{"HF_HUB_CACHE", "~/models"}, {"HOME", "/home/u"}})), fs::path("/home/u/models"));
  EXPECT_FALSE(io::hubCacheRoot(envOf({})).string().empty());  // no HOME: the passwd entry's home
}

TEST(HubCache, ResolvesRefsMainForOrgAndName) {
  ScratchDir s;
  const auto repo = s / "models--meta-llama--Llama-2-7b-hf";
  fs::create_directories(repo / "snapshots" / "abc123");
  fs::create_directories(repo / "snapshots" / "zzz999");
  fs::create_directories(repo / "refs");
  writeFile(repo / "refs" / "main", "abc123");
  const auto dir = io::resolveModelDir("meta-llama/Llama-2-7b-hf", envOf({{"HF_HUB_CACHE", s.path().string()}}));
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
  const auto env = envOf({{"HF_HUB_CACHE", s.path().string()}});
  const std::string name = "EleutherAI/pythia-70m";
  EXPECT_EQ(io::resolveModelDir(name, env, "step143000"), repo / "snapshots" / step_commit);
  EXPECT_EQ(io::resolveModelDir(name, env, other), repo / "snapshots" / other);
  EXPECT_EQ(io::resolveModelDir(name, env, "1111111"), repo / "snapshots" / main_commit);
  EXPECT_EQ(io::snapshotCommit(io::resolveModelDir(name, env, "step143000")), step_commit);
  EXPECT_EQ(io::snapshotCommit(io::resolveModelDir(name, env)), main_commit);
  EXPECT_EQ(io::snapshotCommit(s.path()), "");
  for (const std::string bad : {"step1", "222222", "../refs/main", "/etc"}) {
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

// The InputError of resolving `name` (at `revision`), or a failure if it resolves.
std::string cacheRefusal(const std::string& name, const io::EnvLookup& env, const std::string& revision = "") {
  try {
    const auto dir = io::resolveModelDir(name, env, revision);
    ADD_FAILURE() << "resolved to " << dir;
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const std::string kCommitA(40, 'a'), kCommitB(40, 'b'), kCommitC(40, 'c');

// Two snapshots, B touched last: a resolver that falls back to the newest snapshot loads B.
fs::path twoSnapshots(const fs::path& root) {
  const auto repo = root / "models--org--m";
  fs::create_directories(repo / "snapshots" / kCommitA);
  fs::create_directories(repo / "snapshots" / kCommitB);
  fs::create_directories(repo / "refs");
  fs::last_write_time(repo / "snapshots" / kCommitB, fs::last_write_time(repo / "snapshots" / kCommitA) + std::chrono::hours(1));
  return repo;
}

// huggingface_hub reads refs/main as a commit and loads that snapshot, or refuses offline;
// a missing, empty, garbage or directory ref, or a commit without a snapshot, never falls
// back to the newest snapshot (another commit, maybe another model). Each refusal names
// the refs file and what is wrong with it.
TEST(HubCache, ABadRefIsRefusedNeverReplacedByTheNewestSnapshot) {
  ScratchDir s;
  const auto repo = twoSnapshots(s.path());
  const auto env = envOf({{"HF_HUB_CACHE", s.path().string()}});
  const std::string main_ref = (repo / "refs" / "main").string();
  auto refused = [&](const std::string& says) {
    const auto what = cacheRefusal("org/m", env);
    EXPECT_EQ(what.rfind(main_ref + ": ", 0), 0u) << what;
    EXPECT_NE(what.find(says), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  };
  refused("is missing, so which snapshot is branch main is unknown (snapshots there: " + kCommitA + ", " + kCommitB + ")");
  writeFile(repo / "refs" / "main", kCommitC);
  refused("names commit " + kCommitC + ", which has no snapshot");
  writeFile(repo / "refs" / "main", "");
  refused("is empty");
  writeFile(repo / "refs" / "main", std::string("\x01\xff garbage\n", 11));
  refused("holds '?? garbage', not a commit hash");
  fs::remove(repo / "refs" / "main");
  fs::create_directories(repo / "refs" / "main");
  refused("is a directory");
  fs::remove(repo / "refs" / "main");
  writeFile(repo / "refs" / "main", kCommitA + "\n");  // an editor's trailing newline is fine
  EXPECT_EQ(io::snapshotCommit(io::resolveModelDir("org/m", env)), kCommitA);
}

// A path in a refs file, absolute or climbing out with ../, is not followed: it is not a commit.
TEST(HubCache, APathInARefIsNotFollowed) {
  ScratchDir s;
  const auto repo = twoSnapshots(s / "hub");
  fs::create_directories(s / "elsewhere");
  const auto env = envOf({{"HF_HUB_CACHE", (s / "hub").string()}});
  for (const std::string& path : {(s / "elsewhere").string(), std::string("../../../elsewhere")}) {
    writeFile(repo / "refs" / "main", path);
    const auto what = cacheRefusal("org/m", env);
    EXPECT_EQ(what.rfind((repo / "refs" / "main").string() + ": holds '", 0), 0u) << what;
    EXPECT_NE(what.find("not a commit hash"), std::string::npos) << what;
  }
  writeFile(repo / "refs" / "dev", "../../../elsewhere");  // a branch's ref too
  EXPECT_NE(cacheRefusal("org/m", env, "dev").find("refs/dev: holds '../../../elsewhere', not a commit hash"), std::string::npos);
}

// A huge refs file is not read whole, nor echoed into the one-line error.
TEST(HubCache, AHugeRefIsNotReadWhole) {
  ScratchDir s;
  const auto repo = twoSnapshots(s.path());
  writeFile(repo / "refs" / "main", std::string(1 << 20, 'a'));
  const auto what = cacheRefusal("org/m", envOf({{"HF_HUB_CACHE", s.path().string()}}));
  EXPECT_NE(what.find("holds 1048576 bytes, not a commit hash"), std::string::npos) << what;
  EXPECT_LT(what.size(), 400u);
}

// Every path that resolves is a snapshot directory, so the summary can record its commit.
TEST(HubCache, EveryResolvedSnapshotHasItsCommit) {
  ScratchDir s;
  const auto repo = twoSnapshots(s.path());
  writeFile(repo / "refs" / "main", kCommitB);
  writeFile(repo / "refs" / "v1", kCommitA);
  const auto env = envOf({{"HF_HUB_CACHE", s.path().string()}});
  EXPECT_EQ(io::snapshotCommit(io::resolveModelDir("org/m", env)), kCommitB);
  for (const std::string& revision : {std::string("v1"), kCommitA, kCommitA.substr(0, 9)})
    EXPECT_EQ(io::snapshotCommit(io::resolveModelDir("org/m", env, revision)), kCommitA) << revision;
}

// A prefix of several commits lists them and asks for more digits (not "download it").
TEST(HubCache, AnAmbiguousPrefixListsTheCommits) {
  ScratchDir s;
  const auto repo = twoSnapshots(s.path());
  const std::string a2 = std::string(8, 'a') + std::string(32, '1');
  fs::create_directories(repo / "snapshots" / a2);
  const auto what = cacheRefusal("org/m", envOf({{"HF_HUB_CACHE", s.path().string()}}), "aaaaaaa");
  EXPECT_NE(what.find("'aaaaaaa' is a prefix of 2 commits of org/m in the Hugging Face cache (" + a2 + ", " + kCommitA +
                      "): give more of its digits"),
            std::string::npos)
      << what;
}

// A snapshot file whose blob is gone, or still *.incomplete, is an interrupted download,
// said of that file (it used to be "no model weights found" or "missing config.json").
TEST(HubCache, ALinkToAMissingBlobIsNamed) {
  for (const bool incomplete : {false, true}) {
    ScratchDir s;
    const auto repo = twoSnapshots(s.path());
    writeFile(repo / "refs" / "main", kCommitA);
    const auto snapshot = repo / "snapshots" / kCommitA;
    fs::create_directories(repo / "blobs");
    writeFile(repo / "blobs" / "c0f", "{}");
    fs::create_symlink("../../blobs/c0f", snapshot / "config.json");
    fs::create_symlink("../../blobs/deadbeef", snapshot / "README.md");  // not read: no matter
    const auto env = envOf({{"HF_HUB_CACHE", s.path().string()}});
    EXPECT_EQ(io::resolveModelDir("org/m", env), snapshot);
    if (incomplete) writeFile(repo / "blobs" / "5afe.incomplete", "partial");
    fs::create_symlink("../../blobs/5afe", snapshot / "model.safetensors");
    const auto what = cacheRefusal("org/m", env);
    EXPECT_EQ(what.rfind((snapshot / "model.safetensors").string() + ": is a link to a missing blob " + (repo / "blobs" / "5afe").string() +
                             (incomplete ? " (an interrupted download: its .incomplete file is there)" : " (an interrupted download?)"),
                         0),
              0u)
        << what;
  }
}

// With no refs/main, even one snapshot is not taken as main's: huggingface_hub refuses
// offline too (it reads refs/main or takes a 40-digit commit as the revision).
TEST(HubCache, TheOnlySnapshotWithoutARefNeedsARevision) {
  ScratchDir s;
  fs::create_directories(s / "hub" / "models--gpt2" / "snapshots" / kCommitA);
  const auto env = envOf({{"HF_HOME", s.path().string()}});
  EXPECT_NE(cacheRefusal("gpt2", env).find("refs/main: is missing"), std::string::npos);
  EXPECT_EQ(io::resolveModelDir("gpt2", env, kCommitA), s / "hub" / "models--gpt2" / "snapshots" / kCommitA);
}

TEST(HubCache, ADirectoryIsUsedAsIs) {
  ScratchDir s;
  EXPECT_EQ(io::resolveModelDir(s.path().string(), envOf({})), s.path());
}

TEST(HubCache, MissingModelSaysWhereItLookedAndHowToDownload) {
  ScratchDir s;
  try {
    io::resolveModelDir("gpt2", envOf({{"HF_HUB_CACHE", s.path().string()}}));
    FAIL();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find((s / "models--gpt2").string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("posgeom download gpt2"), std::string::npos) << msg;
  }
}

TEST(HubCache, MissingPathIsNotLookedUpInTheCache) {
  try {
    io::resolveModelDir("/no/such/dir", envOf({}));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model directory does not exist"), std::string::npos);
  }
}

}  // namespace
}  // namespace posgeom::testing
