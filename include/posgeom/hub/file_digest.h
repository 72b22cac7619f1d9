#pragma once
// What a downloaded file is checked against before it becomes a blob: the hub names an
// LFS file by its SHA-256 and any other file by its git blob id (SHA-1 of "blob <size>\0"
// and the bytes), both as lower-case hex.
#include <cstdint>
#include <filesystem>
#include <string>

namespace posgeom::hub {

enum class DigestKind { kNone, kSha256, kGitBlob };

// What an ETag names: 64 hex digits a SHA-256, 40 a git blob id, anything else nothing
// this client can check.
DigestKind digestKindOf(const std::string& etag);

// The digest of a file's bytes, in lower-case hex; InputError naming the file when it
// cannot be read.
std::string fileDigest(const std::filesystem::path& file, DigestKind kind);
// The same of bytes in memory (tests, small files).
std::string bytesDigest(const std::string& bytes, DigestKind kind);

}  // namespace posgeom::hub
