#pragma once
// One file of a snapshot into the cache: its blob written under <etag>.incomplete,
// resumed from there with an HTTP Range, retried with backoff, checked against its ETag's
// digest, then renamed to the blob and linked from the snapshot. Nothing half-written is
// ever a blob or a link.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "posgeom/hub/hub_api.h"
#include "posgeom/hub/repo_cache.h"

namespace posgeom::hub {

struct RetryPolicy {
  int tries = 5;               // a transfer cut, stalled or answered 429/5xx is tried again, this many times in a row
  double first_backoff_s = 1;  // doubled after each failed try
  double max_backoff_s = 16;
  // A try that got this much further before it failed starts the count again: a 16 GB
  // shard on a line that drops every few minutes still finishes, while a line that
  // delivers nothing stops after `tries`.
  int64_t progress_resets_after = int64_t{64} << 20;
};

struct BlobTransfer {
  std::string path;  // in the repository
  RemoteFile remote;
  std::atomic<int64_t> done{0};  // bytes of the blob on disk, the resumed part included
  std::atomic<bool> finished{false};
};

// Downloads `t` (unless its blob is already there) and links it into the snapshot of
// t.remote.commit. `stop` set by another thread makes it return early, leaving the partial
// blob to resume. InputError naming the model, the file and the bytes done when the tries
// run out, or when the bytes do not match the ETag's digest.
void downloadBlob(const HubApi& api, const RepoCache& cache, BlobTransfer& t, const RetryPolicy& retry,
                  const std::atomic<bool>& stop);

// Whether `etag`'s blob is in the cache already.
bool blobPresent(const RepoCache& cache, const std::string& etag);
// Bytes still to fetch for `remote` (its size less a partial blob's).
int64_t bytesMissing(const RepoCache& cache, const RemoteFile& remote);

}  // namespace posgeom::hub
