#include "posgeom/hub/blob_download.h"

#include "input_error.h"
#include "local_hub.h"
#include "posgeom/hub/file_digest.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

struct BlobCase {
  LocalHub hub{oneRepo("org/default", defaultModelDir())};
  ScratchDir cache_dir;
  hub::HubSettings settings;
  std::unique_ptr<hub::HubApi> api;
  std::unique_ptr<hub::RepoCache> cache;
  hub::BlobTransfer t;
  std::string bytes = readFile(defaultModelDir() / "model.safetensors");
  hub::RetryPolicy fast{3, 0.05, 0.1};

  BlobCase() {
    settings.endpoint = hub.endpoint();
    settings.cache = cache_dir.path();
    api = std::make_unique<hub::HubApi>(settings, "org/default");
    cache = std::make_unique<hub::RepoCache>(settings.cache, "org/default");
    t.path = "model.safetensors";
    t.remote = api->file(api->revision("main").commit, t.path);
  }
  void download() {
    std::atomic<bool> stop{false};
    hub::downloadBlob(*api, *cache, t, fast, stop);
  }
};

TEST(BlobDownload, WritesTheBlobAndItsLink) {
  BlobCase c;
  c.download();
  EXPECT_EQ(readFile(c.cache->blob(c.t.remote.etag)), c.bytes);
  EXPECT_EQ(readFile(c.cache->pointer(c.t.remote.commit, "model.safetensors")), c.bytes);
  EXPECT_FALSE(fs::exists(c.cache->incompleteBlob(c.t.remote.etag)));
  EXPECT_TRUE(c.t.finished);
  EXPECT_EQ(c.t.done, static_cast<int64_t>(c.bytes.size()));
  // Present: not fetched again.
  c.hub.clearRequests();
  c.download();
  EXPECT_EQ(c.hub.count("/cdn/"), 0);
}

TEST(BlobDownload, ResumesFromThePartialBlob) {
  BlobCase c;
  fs::create_directories(c.cache->blob("x").parent_path());
  writeFile(c.cache->incompleteBlob(c.t.remote.etag), c.bytes.substr(0, 1000000));
  c.download();
  EXPECT_EQ(c.hub.count("GET /cdn/"), 1);
  EXPECT_EQ(c.hub.count("range=bytes=1000000-"), 1);
  EXPECT_EQ(hub::fileDigest(c.cache->blob(c.t.remote.etag), hub::DigestKind::kSha256), c.t.remote.etag);
}

TEST(BlobDownload, ACutTransferIsRetriedFromWhereItStopped) {
  BlobCase c;
  c.hub.control({{"fail", {{"model.safetensors", {{"after_bytes", 700000}, {"times", 2}}}}}});
  c.download();
  EXPECT_EQ(c.hub.count("GET /cdn/"), 3);
  EXPECT_EQ(c.hub.count("range=bytes=700000-"), 1);
  EXPECT_EQ(c.hub.count("range=bytes=1400000-"), 1);
  EXPECT_EQ(readFile(c.cache->blob(c.t.remote.etag)), c.bytes);
}

TEST(BlobDownload, WhenTheTriesRunOutThePartialBlobStaysAndIsNamed) {
  BlobCase c;
  c.hub.control({{"fail", {{"model.safetensors", {{"after_bytes", 100000}, {"times", 99}}}}}});
  const std::string message = inputErrorOf([&] { c.download(); });
  EXPECT_EQ(message.rfind("org/default: model.safetensors: stopped at ", 0), 0u) << message;
  EXPECT_NE(message.find("after 3 tries in a row"), std::string::npos) << message;
  EXPECT_NE(message.find(c.cache->incompleteBlob(c.t.remote.etag).string()), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(c.cache->blob(c.t.remote.etag)));
  EXPECT_FALSE(fs::is_symlink(c.cache->pointer(c.t.remote.commit, "model.safetensors")));
  EXPECT_EQ(fs::file_size(c.cache->incompleteBlob(c.t.remote.etag)), 300000u);
}

TEST(BlobDownload, TriesThatMakeProgressStartTheCountAgain) {
  BlobCase c;
  c.fast.progress_resets_after = 50000;  // each cut try below gets 100000 bytes further
  c.hub.control({{"fail", {{"model.safetensors", {{"after_bytes", 100000}, {"times", 99}}}}}});
  c.download();
  EXPECT_EQ(readFile(c.cache->blob(c.t.remote.etag)), c.bytes);
  EXPECT_EQ(c.hub.count("GET /cdn/"), static_cast<int>((c.bytes.size() + 99999) / 100000));  // far beyond 3 tries
}

TEST(BlobDownload, AStoreThatIgnoresTheRangeIsReadFromTheStart) {
  BlobCase c;
  c.hub.control({{"ignore_range", true}});
  fs::create_directories(c.cache->blob("x").parent_path());
  writeFile(c.cache->incompleteBlob(c.t.remote.etag), c.bytes.substr(0, 5000));
  c.download();
  EXPECT_EQ(readFile(c.cache->blob(c.t.remote.etag)), c.bytes);
}

TEST(BlobDownload, AWrongResumedPrefixIsFetchedAgainFromItsStart) {
  BlobCase c;
  fs::create_directories(c.cache->blob("x").parent_path());
  std::string wrong = c.bytes.substr(0, 1000);
  wrong[10] ^= 1;  // a damaged partial blob: the rest resumes after it, and the whole fails its SHA-256
  writeFile(c.cache->incompleteBlob(c.t.remote.etag), wrong);
  c.download();
  EXPECT_EQ(readFile(c.cache->blob(c.t.remote.etag)), c.bytes);
  EXPECT_EQ(c.hub.count("range=bytes=1000-"), 1);
  EXPECT_EQ(c.hub.count("GET /cdn/" + c.t.remote.etag + " range=- "), 1);
}

TEST(BlobDownload, BytesThatDoNotMatchTheEtagNeverBecomeABlob) {
  BlobCase c;
  c.hub.control({{"corrupt", {"model.safetensors"}}});
  const std::string message = inputErrorOf([&] { c.download(); });
  EXPECT_EQ(message.rfind("org/default: model.safetensors: the downloaded bytes have SHA-256 ", 0), 0u) << message;
  EXPECT_FALSE(fs::exists(c.cache->blob(c.t.remote.etag)));
  EXPECT_FALSE(fs::exists(c.cache->incompleteBlob(c.t.remote.etag)));  // removed: the next run starts clean
  EXPECT_FALSE(fs::is_symlink(c.cache->pointer(c.t.remote.commit, "model.safetensors")));
  c.hub.control(nlohmann::json::object());
  c.download();
  EXPECT_EQ(readFile(c.cache->blob(c.t.remote.etag)), c.bytes);
}

TEST(BlobDownload, ABusyStoreIsAskedAgainAndAnExpiredAddressRenewed) {
  BlobCase c;
  c.hub.control({{"refuse", {{"model.safetensors", {{"status", 503}, {"times", 1}}}}}});
  c.download();
  EXPECT_EQ(c.hub.count("GET /cdn/"), 2);
  EXPECT_EQ(readFile(c.cache->blob(c.t.remote.etag)), c.bytes);
  BlobCase expired;
  expired.hub.control({{"refuse", {{"model.safetensors", {{"status", 403}, {"times", 1}}}}}});
  expired.hub.clearRequests();
  expired.download();
  EXPECT_EQ(expired.hub.count("HEAD /org/default/resolve/"), 1);  // the store's address asked for again
  EXPECT_EQ(readFile(expired.cache->blob(expired.t.remote.etag)), expired.bytes);
  BlobCase refused;
  refused.hub.control({{"refuse", {{"model.safetensors", {{"status", 403}, {"times", 9}}}}}});
  EXPECT_INPUT_ERROR(refused.download(), "org/default: model.safetensors: the file store answered HTTP 403 after 0 B of ");
}

}  // namespace
}  // namespace posgeom::testing
