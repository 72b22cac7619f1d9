#include "posgeom/hub/file_digest.h"

#include "local_hub.h"

namespace posgeom::testing {
namespace {

// FIPS 180-2's test vector, and git's own id of "hello\n" (`echo hello | git hash-object --stdin`).
TEST(FileDigest, KnownVectors) {
  EXPECT_EQ(hub::bytesDigest("abc", hub::DigestKind::kSha256), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hub::bytesDigest("hello\n", hub::DigestKind::kGitBlob), "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_EQ(hub::bytesDigest("", hub::DigestKind::kGitBlob), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

TEST(FileDigest, AFileDigestsAsItsBytes) {
  ScratchDir s;
  std::string big(9u << 20, 'x');  // more than one read chunk
  big[123] = 'y';
  writeFile(s / "f", big);
  for (auto kind : {hub::DigestKind::kSha256, hub::DigestKind::kGitBlob})
    EXPECT_EQ(hub::fileDigest(s / "f", kind), hub::bytesDigest(big, kind));
}

TEST(FileDigest, WhatAnEtagNames) {
  EXPECT_EQ(hub::digestKindOf(std::string(64, 'a')), hub::DigestKind::kSha256);
  EXPECT_EQ(hub::digestKindOf(std::string(40, '0')), hub::DigestKind::kGitBlob);
  EXPECT_EQ(hub::digestKindOf(std::string(40, 'A')), hub::DigestKind::kNone);  // the hub writes lower case
  EXPECT_EQ(hub::digestKindOf("abc-1"), hub::DigestKind::kNone);
}

}  // namespace
}  // namespace posgeom::testing
