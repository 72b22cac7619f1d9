#include "posgeom/hub/repo_cache.h"

#include "local_hub.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(RepoCache, HuggingFaceHubsLayout) {
  ScratchDir s;
  const hub::RepoCache cache(s.path(), "org/m");
  EXPECT_EQ(cache.repo(), s / "models--org--m");
  EXPECT_EQ(cache.blob("e1"), s / "models--org--m/blobs/e1");
  EXPECT_EQ(cache.incompleteBlob("e1"), s / "models--org--m/blobs/e1.incomplete");
  EXPECT_EQ(cache.pointer("c1", "onnx/a.onnx"), s / "models--org--m/snapshots/c1/onnx/a.onnx");
  EXPECT_EQ(cache.blobLock("e1"), s / ".locks/models--org--m/e1.lock");
}

TEST(RepoCache, LinksAreRelativeAndReplaceable) {
  ScratchDir s;
  const hub::RepoCache cache(s.path(), "org/m");
  fs::create_directories(cache.blob("e1").parent_path());
  writeFile(cache.blob("e1"), "one");
  writeFile(cache.blob("e2"), "two");
  cache.link("c1", "config.json", "e1");
  cache.link("c1", "sub/dir/f.json", "e1");
  EXPECT_EQ(fs::read_symlink(cache.pointer("c1", "config.json")), fs::path("../../blobs/e1"));
  EXPECT_EQ(fs::read_symlink(cache.pointer("c1", "sub/dir/f.json")), fs::path("../../../../blobs/e1"));
  EXPECT_EQ(readFile(cache.pointer("c1", "sub/dir/f.json")), "one");
  cache.link("c1", "config.json", "e2");
  EXPECT_EQ(readFile(cache.pointer("c1", "config.json")), "two");
  // Moving the whole cache keeps every link working, as huggingface_hub's relative links do.
  fs::rename(s / "models--org--m", s / "moved");
  EXPECT_EQ(readFile(s / "moved/snapshots/c1/config.json"), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(s / "moved/snapshots/c1"), fs::directory_iterator{}), 2);  // no temporary left
}

TEST(RepoCache, RefsHoldTheCommitExceptForACommit) {
  ScratchDir s;
  const hub::RepoCache cache(s.path(), "org/m");
  const std::string commit(40, 'a');
  cache.writeRef("main", commit);
  cache.writeRef("refs/pr/1", commit);
  cache.writeRef(commit, commit);
  EXPECT_EQ(readFile(cache.repo() / "refs/main"), commit);
  EXPECT_EQ(readFile(cache.repo() / "refs/refs/pr/1"), commit);
  EXPECT_FALSE(fs::exists(cache.repo() / "refs" / commit));
}

}  // namespace
}  // namespace posgeom::testing
