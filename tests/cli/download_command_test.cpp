// `posgeom download` and every command's hub names, against a local hub: the acceptance of
// issue 37 end to end (a report equal to the directory's, a killed download resumed, two
// processes downloading once, each refusal one line and exit 2, offline never connecting,
// huggingface_hub reading posgeom's cache and posgeom reading huggingface_hub's).
#include <chrono>
#include <csignal>
#include <thread>

#include "local_hub.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

Environment with(Environment env, const Environment& more) {
  env.insert(env.end(), more.begin(), more.end());
  return env;
}

// The lines of stderr that are errors: the one a refusal must say.
std::vector<std::string> errorLines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.find("error") != std::string::npos) lines.push_back(line);
  return lines;
}

std::vector<std::string> analyzeArgs(const std::string& model, const fs::path& out) {
  return {"analyze", "--model", model, "--num-seqs", "8", "--seq-len", "32", "--out", out.string()};
}

// A report's numbers: every layer's metrics and the cross-layer table, and what analyze
// records of the model's files (their content's fingerprint).
nlohmann::json reportNumbers(const fs::path& out) {
  const auto s = nlohmann::json::parse(readFile(out / "summary.json"));
  return {{"layers", s.at("layers")}, {"cross_layer", s.at("cross_layer")}, {"fingerprint", s.at("model_fingerprint")},
          {"csv", readFile(out / "layers.csv")}};
}

TEST(DownloadCommand, AHubNameGivesTheDirectorysReport) {
  LocalHub hub(oneRepo("org/default", defaultModelDir()));
  ScratchDir s;
  const auto from_hub = runPosgeomWith(analyzeArgs("org/default", s / "hub"), hub.env(s / "cache"));
  ASSERT_EQ(from_hub.exit_code, 0) << from_hub.err;
  const auto from_dir = runPosgeom(analyzeArgs(defaultModelDir().string(), s / "dir"));
  ASSERT_EQ(from_dir.exit_code, 0) << from_dir.err;
  EXPECT_EQ(reportNumbers(s / "hub"), reportNumbers(s / "dir"));
  // `download` afterwards finds every file there and prints the snapshot the report names.
  const auto download = runPosgeomWith({"download", "org/default"}, hub.env(s / "cache"));
  ASSERT_EQ(download.exit_code, 0) << download.err;
  const fs::path snapshot = download.out.substr(0, download.out.find('\n'));
  EXPECT_EQ(snapshot.parent_path().parent_path(), s / "cache/models--org--default");
  EXPECT_EQ(nlohmann::json::parse(readFile(s / "hub/summary.json")).at("model"), snapshot.string());
  EXPECT_EQ(hub.count("GET /cdn/"), 1);
}

TEST(DownloadCommand, EveryCommandTakesAHubName) {
  LocalHub hub(oneRepo("org/default", defaultModelDir()));
  ScratchDir s;
  const auto env = hub.env(s / "cache");
  const auto tokens = runPosgeomWith({"tokenize", "--model", "org/default", "--input", (defaultModelDir() / "config.json").string()}, env);
  ASSERT_EQ(tokens.exit_code, 0) << tokens.err;
  EXPECT_EQ(hub.count("/cdn/"), 0);  // the tokenizer alone: no weights
  const auto inspect = runPosgeomWith({"inspect", "--model", "org/default"}, env);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(hub.count("GET /cdn/"), 1);
  const auto forward = runPosgeomWith({"forward", "--model", "org/default", "--random-ids", "1,8", "--out", (s / "h.safetensors").string()}, env);
  ASSERT_EQ(forward.exit_code, 0) << forward.err;
  EXPECT_EQ(hub.count("GET /cdn/"), 1);  // cached by then
}

TEST(DownloadCommand, EachRefusalIsOneLineAndExit2BeforeAnyWork) {
  LocalHub hub(nlohmann::json{{"org/default", {{"revisions", {{"main", defaultModelDir().string()}}}}},
                              {"org/gated", {{"revisions", {{"main", defaultModelDir().string()}}}, {"gated", true}}}});
  ScratchDir s;
  const auto env = hub.env(s / "cache");
  struct Case {
    std::vector<std::string> args;
    Environment env;
    std::string starts, says;
  };
  const std::vector<Case> cases{
      {{"download", "org/absent"}, env, "org/absent: no such model", "HF_TOKEN"},
      {{"download", "org/gated"}, env, "org/gated: a gated model", "HF_TOKEN"},
      {{"download", "org/gated"}, with(env, {{"HF_TOKEN", "hf_wrong"}}), "org/gated: a gated model", "may not read"},
      {{"download", "org/default", "--revision", "v9"}, env, "--revision: 'v9' is not a branch, tag or commit of org/default", ""},
      {{"download", "org/default"}, with(env, {{"HF_ENDPOINT", "http://127.0.0.1:" + std::to_string(freePort())}}),
       "org/default: cannot reach", "HF_ENDPOINT"},
      {{"download", "org/default"}, with(env, {{"HF_HUB_OFFLINE", "1"}}), "org/default: not a directory, and not in the Hugging Face cache",
       "HF_HUB_OFFLINE"},
      {{"download", "not a name"}, env, "download: 'not a name' is not a hub name", ""},
      {analyzeArgs("org/absent", s / "r1"), env, "org/absent: no such model", ""},
      {analyzeArgs("org/gated", s / "r2"), env, "org/gated: a gated model", "HF_TOKEN"},
      {{"inspect", "--model", "org/default", "--revision", "v9"}, env, "--revision: 'v9' is not a branch", ""},
      {{"download", "org/default"}, with(env, {{"HF_HUB_CACHE", (defaultModelDir() / "config.json" / "cache").string()}}),
       (defaultModelDir() / "config.json" / "cache" / ".locks" / "models--org--default").string() + ": cannot be made", "HF_HUB_CACHE"},
      // Options the config can judge are judged before the weights come.
      {{"analyze", "--model", "org/default", "--layer", "99", "--out", (s / "r3").string()}, env, "--layer", ""},
      {{"forward", "--model", "org/default", "--random-ids", "1,8", "--out", (defaultModelDir() / "config.json").string()}, env,
       defaultModelDir().string(), ""},
      {{"tokenize", "--model", "org/default", "--input", (s / "absent.txt").string()}, env, (s / "absent.txt").string(), ""},
  };
  for (const auto& c : cases) {
    const auto r = runPosgeomWith(c.args, c.env);
    EXPECT_EQ(r.exit_code, 2) << c.args[1] << "\n" << r.err;
    const auto lines = errorLines(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    std::istringstream all(r.err);
    for (std::string line; std::getline(all, line);)  // the rest is the log of what was done
      EXPECT_TRUE(line.rfind("posgeom: info: ", 0) == 0 || line.rfind("posgeom: error: ", 0) == 0) << line;
    EXPECT_NE(lines[0].find("posgeom: error: " + c.starts), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(c.says), std::string::npos) << lines[0];
  }
  EXPECT_EQ(hub.count("/cdn/"), 0);
  EXPECT_FALSE(fs::exists(s / "r1"));
  EXPECT_FALSE(fs::exists(s / "r2"));
}

TEST(DownloadCommand, OfflineModeNeverOpensAConnection) {
  LocalHub hub(oneRepo("org/default", defaultModelDir()));
  ScratchDir s;
  const auto offline = with(hub.env(s / "cache"), {{"HF_HUB_OFFLINE", "1"}});
  for (const auto& args : std::vector<std::vector<std::string>>{{"download", "org/default"}, analyzeArgs("org/default", s / "r"),
                                                                 {"tokenize", "--model", "org/default", "--input", "-"}})
    EXPECT_EQ(runPosgeomWith(args, offline).exit_code, 2) << args[0];
  EXPECT_EQ(hub.requests().size(), 0u);
  ASSERT_EQ(runPosgeomWith({"download", "org/default"}, hub.env(s / "cache")).exit_code, 0);
  hub.clearRequests();
  const auto r = runPosgeomWith(analyzeArgs("org/default", s / "r"), offline);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hub.requests().size(), 0u);
}

fs::path incompleteBlobIn(const fs::path& cache) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(cache, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".incomplete") return it->path();
  return {};
}

TEST(DownloadCommand, AKilledDownloadResumesFromItsPartialBlob) {
  LocalHub hub(oneRepo("org/default", defaultModelDir()));
  ScratchDir s;
  const auto weights = readFile(defaultModelDir() / "model.safetensors");
  hub.control({{"throttle_bytes_per_s", 400000}});  // 3.3 MB in about 8 s
  {
    RunningProgram first(POSGEOM_BINARY, {"download", "org/default"}, "", hub.env(s / "cache"));
    fs::path partial;
    for (int i = 0; i < 400; ++i) {
      partial = incompleteBlobIn(s / "cache");
      std::error_code ec;
      if (!partial.empty() && fs::file_size(partial, ec) > 300000) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ASSERT_FALSE(partial.empty());
    first.signal(SIGKILL);
    EXPECT_EQ(first.wait().exit_code, 128 + SIGKILL);
  }
  const auto partial = incompleteBlobIn(s / "cache");
  ASSERT_FALSE(partial.empty());
  const auto kept = fs::file_size(partial);
  EXPECT_GT(kept, 300000u);
  EXPECT_LT(kept, weights.size());
  EXPECT_FALSE(fs::exists(s / "cache/models--org--default/refs/main"));  // nothing half-done is pointed to
  hub.control(nlohmann::json::object());
  const auto second = runPosgeomWith({"download", "org/default"}, hub.env(s / "cache"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_GE(hub.count("range=bytes="), 1);
  EXPECT_EQ(hub.count("range=bytes=" + std::to_string(kept) + "-"), 1) << kept;
  const fs::path snapshot = second.out.substr(0, second.out.find('\n'));
  EXPECT_EQ(readFile(snapshot / "model.safetensors"), weights);  // its SHA-256 was checked against the ETag too
  EXPECT_TRUE(incompleteBlobIn(s / "cache").empty());
}

TEST(DownloadCommand, TwoProcessesAtOnceDownloadEachFileOnce) {
  LocalHub hub(oneRepo("org/default", defaultModelDir()));
  ScratchDir s;
  hub.control({{"throttle_bytes_per_s", 2000000}});
  RunningProgram a(POSGEOM_BINARY, {"download", "org/default"}, "", hub.env(s / "cache"));
  RunningProgram b(POSGEOM_BINARY, {"analyze", "--model", "org/default", "--num-seqs", "4", "--seq-len", "16", "--out", (s / "r").string()},
                   "", hub.env(s / "cache"));
  const auto ra = a.wait(), rb = b.wait();
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_EQ(hub.count("GET /cdn/"), 1);
  for (const char* f : {"config.json", "tokenizer.json"}) {  // fetched once, whichever process came first
    int gets = 0;
    for (const auto& line : hub.requests()) gets += line.rfind("GET ", 0) == 0 && line.find(std::string("/") + f + " range") != std::string::npos;
    EXPECT_EQ(gets, 1) << f;
  }
}

// huggingface_hub (the pinned one of tools/hub-venv) as the other side of one cache.
CommandResult hubPythonRun(const std::string& code, const Environment& env) {
  return RunningProgram(hubPython().string(), {"-c", code}, "", env).wait();
}

TEST(DownloadCommand, HuggingFaceHubAndPosgeomShareOneCache) {
  POSGEOM_REQUIRE_HUB_PYTHON();
  LocalHub hub(oneRepo("org/default", defaultModelDir()));
  ScratchDir s;
  // posgeom writes; huggingface_hub reads it offline, file by file and as a snapshot.
  const auto ours = runPosgeomWith({"download", "org/default"}, hub.env(s / "ours"));
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  const auto read = hubPythonRun(
      "from huggingface_hub import hf_hub_download, snapshot_download\n"
      "for f in ['config.json', 'tokenizer.json', 'model.safetensors']:\n"
      "    print(hf_hub_download('org/default', f, local_files_only=True))\n"
      "print(snapshot_download('org/default', local_files_only=True))\n",
      with(hub.env(s / "ours"), {{"HF_HUB_OFFLINE", "1"}}));
  ASSERT_EQ(read.exit_code, 0) << read.err;
  const fs::path snapshot = ours.out.substr(0, ours.out.find('\n'));
  EXPECT_EQ(read.out, (snapshot / "config.json").string() + "\n" + (snapshot / "tokenizer.json").string() + "\n" +
                          (snapshot / "model.safetensors").string() + "\n" + snapshot.string() + "\n");
  // huggingface_hub writes from the same hub; posgeom reads it offline and gives the directory's report.
  const auto theirs = hubPythonRun("from huggingface_hub import snapshot_download\nprint(snapshot_download('org/default'))\n",
                                   hub.env(s / "theirs"));
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  EXPECT_EQ(theirs.out, (s / "theirs/models--org--default/snapshots" / snapshot.filename()).string() + "\n");  // one commit id
  hub.clearRequests();
  const auto r = runPosgeomWith(analyzeArgs("org/default", s / "hub"), with(hub.env(s / "theirs"), {{"HF_HUB_OFFLINE", "1"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hub.requests().size(), 0u);
  ASSERT_EQ(runPosgeom(analyzeArgs(defaultModelDir().string(), s / "dir")).exit_code, 0);
  EXPECT_EQ(reportNumbers(s / "hub"), reportNumbers(s / "dir"));
  // Blobs the two wrote are named alike: the same ETags.
  for (const char* f : {"config.json", "model.safetensors"})
    EXPECT_EQ(fs::read_symlink(snapshot / f), fs::read_symlink(s / "theirs/models--org--default/snapshots" / snapshot.filename() / f)) << f;
}

}  // namespace
}  // namespace posgeom::testing
