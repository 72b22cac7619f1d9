#include "posgeom/hub/snapshot_download.h"

#include <chrono>

#include "captured_log.h"
#include "input_error.h"
#include "local_hub.h"
#include "posgeom/hub/file_digest.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// The default model with what a real repository holds beside it: a README, an ONNX export
// and a consolidated checkpoint, none of which posgeom reads.
fs::path crowdedRepo(const fs::path& dir) {
  fs::copy(defaultModelDir(), dir, fs::copy_options::recursive);
  writeFile(dir / "README.md", "# a model\n");
  fs::create_directories(dir / "onnx");
  writeFile(dir / "onnx/model.onnx", std::string(1000, 'o'));
  fs::copy_file(dir / "model.safetensors", dir / "consolidated.safetensors");
  return dir;
}

// The default model's tensors in two shards with their index, as save_pretrained shards.
fs::path shardedRepo(const fs::path& dir) {
  fs::create_directories(dir);
  fs::copy_file(defaultModelDir() / "config.json", dir / "config.json");
  const auto whole = io::SafetensorsFile::open(defaultModelDir() / "model.safetensors");
  io::SafetensorsWriter shards[2];
  nlohmann::json map = nlohmann::json::object();
  int i = 0;
  for (const auto& [name, t] : whole.tensors()) {
    const int shard = i++ % 2;
    shards[shard].add(name, t.dtype, t.shape, t.data, t.nbytes);
    map[name] = "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
  }
  for (int s = 0; s < 2; ++s) shards[s].write(dir / ("model-0000" + std::to_string(s + 1) + "-of-00002.safetensors"));
  writeFile(dir / "model.safetensors.index.json", nlohmann::json{{"metadata", nlohmann::json::object()}, {"weight_map", map}}.dump());
  return dir;
}

hub::SnapshotRequest request(const std::string& name, const std::string& revision = "") {
  hub::SnapshotRequest r;
  r.name = name;
  r.revision = revision;
  return r;
}

struct SnapshotCase {
  ScratchDir repos, cache_dir;
  std::unique_ptr<LocalHub> hub;
  hub::HubSettings settings;
  explicit SnapshotCase(const nlohmann::json& spec) : hub(std::make_unique<LocalHub>(spec)) {
    settings.endpoint = hub->endpoint();
    settings.cache = cache_dir.path();
  }
  fs::path download(hub::SnapshotRequest r) {
    r.retry = {3, 0.05, 0.1};
    return hub::downloadSnapshot(settings, r);
  }
};

TEST(SnapshotDownload, WhatPosgeomReadsInHuggingFacesLayout) {
  ScratchDir s;
  SnapshotCase c(oneRepo("org/m", crowdedRepo(s / "m")));
  const auto snapshot = c.download(request("org/m"));
  const auto commit = snapshot.filename().string();
  EXPECT_EQ(snapshot, c.cache_dir / ("models--org--m/snapshots/" + commit));
  EXPECT_EQ(readFile(c.cache_dir / "models--org--m/refs/main"), commit);
  for (const char* f : {"config.json", "tokenizer.json", "model.safetensors", "train_config.json", "training.json"}) {
    EXPECT_EQ(readFile(snapshot / f), readFile(defaultModelDir() / f)) << f;
    const auto blob = fs::read_symlink(snapshot / f);
    EXPECT_EQ(blob.parent_path(), fs::path("../../blobs")) << f;
    const auto kind = std::string(f) == "model.safetensors" ? hub::DigestKind::kSha256 : hub::DigestKind::kGitBlob;
    EXPECT_EQ(blob.filename().string(), hub::fileDigest(defaultModelDir() / f, kind)) << f;  // named by the hub's ETag
  }
  for (const char* f : {"README.md", "onnx/model.onnx", "consolidated.safetensors", "train_log.csv"})
    EXPECT_FALSE(fs::exists(snapshot / f)) << f;
  EXPECT_EQ(c.hub->count("consolidated"), 0);
  EXPECT_EQ(c.hub->count("onnx"), 0);
  // Again: the hub is asked which commit main is, and nothing is fetched.
  c.hub->clearRequests();
  EXPECT_EQ(c.download(request("org/m")), snapshot);
  EXPECT_EQ(c.hub->count("GET /cdn/"), 0);
  EXPECT_EQ(c.hub->count("GET /org/m/resolve/"), 0);
}

TEST(SnapshotDownload, ShardsNamedByTheIndexOnly) {
  ScratchDir s;
  const auto dir = shardedRepo(s / "m");
  fs::copy_file(defaultModelDir() / "model.safetensors", dir / "consolidated.safetensors");
  SnapshotCase c(oneRepo("org/sharded", dir));
  const auto snapshot = c.download(request("org/sharded"));
  for (const char* f : {"model.safetensors.index.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"})
    EXPECT_EQ(readFile(snapshot / f), readFile(dir / f)) << f;
  EXPECT_FALSE(fs::exists(snapshot / "consolidated.safetensors"));
}

TEST(SnapshotDownload, TokenizerPartsLeaveTheWeights) {
  SnapshotCase c(oneRepo("org/m", defaultModelDir()));
  auto r = request("org/m");
  r.parts = hub::ModelParts::kTokenizer;
  const auto snapshot = c.download(r);
  EXPECT_TRUE(fs::exists(snapshot / "tokenizer.json"));
  EXPECT_FALSE(fs::exists(snapshot / "model.safetensors"));
}

TEST(SnapshotDownload, IncludeAndRevisions) {
  ScratchDir s;
  const auto other = s / "v1";
  fs::copy(defaultModelDir(), other);
  writeFile(other / "config.json", readFile(defaultModelDir() / "config.json") + "\n");
  SnapshotCase c(nlohmann::json{{"org/m", {{"revisions", {{"main", defaultModelDir().string()}, {"v1", other.string()}}}}}});
  auto r = request("org/m");
  r.revision = "v1";
  r.include = {"*.json"};
  const auto snapshot = c.download(r);
  EXPECT_EQ(readFile(snapshot / "config.json"), readFile(other / "config.json"));
  EXPECT_FALSE(fs::exists(snapshot / "model.safetensors"));
  EXPECT_EQ(readFile(c.cache_dir / "models--org--m/refs/v1"), snapshot.filename().string());
  EXPECT_FALSE(fs::exists(c.cache_dir / "models--org--m/refs/main"));
  // A commit as the revision: no ref for it; a short prefix works as on the hub.
  auto by_commit = request("org/m");
  by_commit.revision = snapshot.filename().string().substr(0, 10);
  by_commit.include = {"config.json"};
  EXPECT_EQ(c.download(by_commit), snapshot);
  EXPECT_INPUT_ERROR(c.download(request("org/m", "../../x")), "--revision: '../../x' is not a branch, tag or commit name");
}

TEST(SnapshotDownload, OfflineTouchesNothing) {
  SnapshotCase c(oneRepo("org/m", defaultModelDir()));
  c.settings.offline = true;
  EXPECT_INPUT_ERROR(c.download(request("org/m")), "org/m: HF_HUB_OFFLINE is set");
  EXPECT_EQ(c.hub->requests().size(), 0u);
}

TEST(SnapshotDownload, AFailedFileStopsTheOthersWithoutAHalfSnapshotRef) {
  ScratchDir s;
  SnapshotCase c(oneRepo("org/m", shardedRepo(s / "m")));
  // One shard fails for good while the other crawls: the other stops too, its partial kept.
  c.hub->control({{"fail", {{"model-00001-of-00002.safetensors", {{"after_bytes", 1000}, {"times", 99}}}}},
                  {"throttle_bytes_per_s", 100000}});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_INPUT_ERROR(c.download(request("org/m")), "org/m: model-00001-of-00002.safetensors: stopped at ");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 12.0);  // not the 16 s the crawl needs
  EXPECT_FALSE(fs::exists(c.cache_dir / "models--org--m/refs/main"));
  int blobs = 0, partials = 0;
  for (const auto& e : fs::directory_iterator(c.cache_dir / "models--org--m/blobs"))
    (e.path().extension() == ".incomplete" ? partials : blobs) += 1;
  EXPECT_EQ(partials, 2);
  for (const auto& e : fs::recursive_directory_iterator(c.cache_dir / "models--org--m/snapshots"))
    EXPECT_EQ(e.path().filename().string().find("model-0000"), std::string::npos) << e.path();  // no link to a partial
}

TEST(SnapshotDownload, TooLittleDiskIsSaidBeforeAnyWeightByte) {
  SnapshotCase c(oneRepo("org/m", defaultModelDir()));
  c.hub->control({{"linked_size", {{"model.safetensors", int64_t{1} << 50}}}});
  EXPECT_INPUT_ERROR(c.download(request("org/m")), "org/m: needs 1024.0 TiB more in ");
  EXPECT_EQ(c.hub->count("/cdn/"), 0);
}

TEST(SnapshotDownload, TheTokenGoesToTheHubNeverToTheStore) {
  SnapshotCase c(nlohmann::json{{"org/p", {{"revisions", {{"main", defaultModelDir().string()}}}, {"private", true}}}});
  c.settings.token = LocalHub::kToken;
  c.settings.token_source = "HF_TOKEN";
  c.download(request("org/p"));
  EXPECT_GT(c.hub->count("/resolve/"), 0);
  EXPECT_EQ(c.hub->count("/resolve/"), c.hub->count("auth=yes") - c.hub->count("/api/"));
  EXPECT_EQ(c.hub->count("GET /cdn/"), 1);
  for (const auto& line : c.hub->requests()) {
    if (line.find("/cdn/") != std::string::npos) {
      EXPECT_NE(line.find("auth=no"), std::string::npos) << line;
    }
  }
}

TEST(SnapshotDownload, ProgressLinesPerFileAndInTotal) {
  SnapshotCase c(oneRepo("org/m", defaultModelDir()));
  c.hub->control({{"throttle_bytes_per_s", 1000000}});  // the 3.1 MiB of weights in about 3 s
  CapturedLog log;
  auto r = request("org/m");
  r.progress_every_s = 0.5;
  c.download(r);
  const auto text = log.str();
  EXPECT_NE(text.find("download org/m: model.safetensors "), std::string::npos) << text;  // "1.0 MiB of 3.1 MiB (32%)"
  EXPECT_NE(text.find(" of 3.1 MiB in 1 file, "), std::string::npos) << text;           // the total, with rate and ETA
  EXPECT_NE(text.find("/s, ETA "), std::string::npos) << text;
  EXPECT_NE(text.find("download org/m: model.safetensors (3.1 MiB) in "), std::string::npos) << text;  // and when it is done
}

TEST(SnapshotDownload, AnEmptyFileIsABlobToo) {
  ScratchDir s;
  fs::copy(defaultModelDir(), s / "m");
  writeFile(s / "m/empty.json", "");
  SnapshotCase c(oneRepo("org/m", s / "m"));
  const auto snapshot = c.download(request("org/m"));
  EXPECT_TRUE(fs::is_symlink(snapshot / "empty.json"));
  EXPECT_EQ(readFile(snapshot / "empty.json"), "");
}

}  // namespace
}  // namespace posgeom::testing
