#include "posgeom/hub/blob_download.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <spdlog/spdlog.h>
#include <thread>

#include "posgeom/base/byte_size.h"
#include "posgeom/base/error.h"
#include "posgeom/hub/file_digest.h"
#include "posgeom/hub/file_lock.h"

namespace posgeom::hub {
namespace fs = std::filesystem;
namespace {

int64_t sizeOnDisk(const fs::path& file) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

// The partial blob, appended to; `from` 0 truncates it.
class PartialBlob {
 public:
  PartialBlob(const fs::path& path, int64_t from) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (from == 0 ? O_TRUNC : O_APPEND), 0644);
    if (fd_ < 0) throw InputError(path.string(), "cannot be written");
  }
  ~PartialBlob() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool write(const char* data, std::size_t size) {
    while (size > 0) {
      const auto n = ::write(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }
  void sync() {
    if (::fsync(fd_) != 0) throw InputError(path_.string(), "cannot be flushed to disk (a full disk?)");
  }

 private:
  fs::path path_;
  int fd_ = -1;
};

bool retryable(long status) { return status == 429 || status == 408 || status >= 500; }

// "bytes <first>-<last>/<total>": where a 206's part starts.
int64_t rangeStart(const std::string& content_range) {
  const auto space = content_range.find(' ');
  const auto dash = content_range.find('-');
  if (space == std::string::npos || dash == std::string::npos || dash < space) return -1;
  try {
    return std::stoll(content_range.substr(space + 1, dash - space - 1));
  } catch (const std::exception&) {
    return -1;
  }
}

struct TryEnd {
  std::string why;         // "" when the bytes are all there
  long status = 0;         // an HTTP refusal's status (0: none)
  bool permanent = false;  // another try would end the same way
};

// One try: appends what arrives to the partial blob, never past the file's size.
TryEnd fetchOnce(const HubApi& api, HttpClient& http, BlobTransfer& t, const fs::path& partial, const std::atomic<bool>& stop) {
  int64_t from = sizeOnDisk(partial);
  if (from > t.remote.size) {  // longer than the file: not a prefix of it
    PartialBlob(partial, 0);
    from = 0;
  }
  auto blob = std::make_unique<PartialBlob>(partial, from);  // made even for an empty file
  t.done = from;
  if (from == t.remote.size) return {};
  HttpRequest request;
  request.url = t.remote.location;
  request.headers = api.headersFor(request.url);
  request.follow_redirects = true;
  request.connect_timeout_s = api.settings().metadata_timeout_s;
  request.stall_timeout_s = api.settings().stall_timeout_s;
  if (from > 0) request.range_from = from;
  bool write_failed = false, too_long = false;
  request.sink = [&](const char* data, std::size_t size) {
    if (stop) return false;
    if (t.done + static_cast<int64_t>(size) > t.remote.size) {
      too_long = true;
      return false;
    }
    if (!blob->write(data, size)) {
      write_failed = true;
      return false;
    }
    t.done += static_cast<int64_t>(size);
    return true;
  };
  request.on_start = [&](long status, const HttpResponse& r) {
    if (from == 0) return true;
    if (status == 206 && rangeStart(r.header("content-range")) == from) return true;
    blob = std::make_unique<PartialBlob>(partial, 0);  // the store sent the whole file (or another part): start over
    t.done = 0;
    return status == 200;
  };
  HttpResponse r;
  try {
    r = http.perform(request);
  } catch (const TransportError& e) {
    if (write_failed) throw InputError(partial.string(), "cannot be written (a full disk?)");
    if (too_long) {
      PartialBlob(partial, 0);
      return {"the file store sent more bytes than the hub's size for it (" + std::to_string(t.remote.size) + ")", 0, true};
    }
    return {e.what(), 0, !e.transient()};
  }
  if (r.status == 416) {  // the store will not resume from there: start over
    PartialBlob(partial, 0);
    return {"the store refused to resume (HTTP 416)"};
  }
  if (r.status < 200 || r.status >= 300) return {"HTTP " + std::to_string(r.status), r.status};
  blob->sync();
  if (sizeOnDisk(partial) < t.remote.size) return {"the answer ended early"};
  return {};
}

// Whether the finished partial blob has the ETag's digest (true where the ETag names none).
bool digestMatches(const HubApi& api, const BlobTransfer& t, const fs::path& partial, std::string& digest) {
  const auto kind = digestKindOf(t.remote.etag);
  if (kind == DigestKind::kNone) {
    spdlog::warn("{}: {}: its ETag '{}' names no digest, so only its size was checked", api.name(), t.path, t.remote.etag);
    return true;
  }
  digest = fileDigest(partial, kind);
  return digest == t.remote.etag;
}

// Waits `seconds`, or less when `stop` is set.
void pause(double seconds, const std::atomic<bool>& stop) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// Fetches the blob into `partial` until it is whole: tries after cut, stalled or busy
// transfers; a fresh store address once where the store refuses the one held (signed
// addresses expire); a resumed prefix that proves wrong fetched again from byte 0 once.
void fetchBlob(const HubApi& api, BlobTransfer& t, const fs::path& partial, const RetryPolicy& retry, const std::atomic<bool>& stop) {
  HttpClient http;
  double backoff = retry.first_backoff_s;
  bool refreshed = false, refetched = false;
  for (int attempt = 1;;) {
    const int64_t before = sizeOnDisk(partial);
    const bool resumed = before > 0;
    const auto end = fetchOnce(api, http, t, partial, stop);
    if (stop) return;
    if (end.why.empty()) {
      std::string digest;
      if (digestMatches(api, t, partial, digest)) return;
      fs::remove(partial);
      const std::string what = digestKindOf(t.remote.etag) == DigestKind::kSha256 ? "SHA-256 " : "git blob id ";
      if (resumed && !refetched) {  // the kept prefix was wrong (another writer's, a damaged disk): once from 0
        spdlog::warn("{}: {}: the resumed file has {}{}, not {}: fetching it again from its start", api.name(), t.path, what, digest,
                     t.remote.etag);
        refetched = true;
        continue;
      }
      throw InputError(api.name(), t.path + ": the downloaded bytes have " + what + digest + ", not " + t.remote.etag +
                                       " as the hub says; the partial file was removed: run again");
    }
    const int64_t have = sizeOnDisk(partial);
    if (have - before >= retry.progress_resets_after) {  // it got well further: a new run of tries
      attempt = 1;
      backoff = retry.first_backoff_s;
    }
    const bool store_refused = end.status == 401 || end.status == 403 || end.status == 404 || end.status == 410;
    if (store_refused && !refreshed && urlOrigin(t.remote.location) != urlOrigin(api.settings().endpoint)) {
      HubApi fresh(api.settings(), api.name());  // this thread's own: HubApi is one request at a time
      t.remote.location = fresh.file(t.remote.commit, t.path).location;
      refreshed = true;
      continue;
    }
    if (end.permanent)
      throw InputError(api.name(), t.path + ": " + end.why + " after " + formatBytes(have) + " of " + formatBytes(t.remote.size));
    const bool fatal = end.status != 0 && !retryable(end.status);
    if (fatal)
      throw InputError(api.name(), t.path + ": the file store answered " + end.why + " after " + formatBytes(have) + " of " +
                                       formatBytes(t.remote.size) + "; run again to resume from " + partial.string());
    if (attempt >= retry.tries)
      throw InputError(api.name(), t.path + ": stopped at " + formatBytes(have) + " of " + formatBytes(t.remote.size) + " after " +
                                       std::to_string(attempt) + " tries in a row (" + end.why + "); run again to resume from " +
                                       partial.string());
    spdlog::warn("{}: {}: {} at {} of {}; trying again in {} s ({} of {} tries)", api.name(), t.path, end.why, formatBytes(have),
                 formatBytes(t.remote.size), backoff, attempt + 1, retry.tries);
    pause(backoff, stop);
    backoff = std::min(retry.max_backoff_s, backoff * 2);
    ++attempt;
  }
}

}  // namespace

bool blobPresent(const RepoCache& cache, const std::string& etag) {
  std::error_code ec;
  return fs::is_regular_file(cache.blob(etag), ec);
}

int64_t bytesMissing(const RepoCache& cache, const RemoteFile& remote) {
  if (blobPresent(cache, remote.etag)) return 0;
  return std::max<int64_t>(0, remote.size - std::min(remote.size, sizeOnDisk(cache.incompleteBlob(remote.etag))));
}

void downloadBlob(const HubApi& api, const RepoCache& cache, BlobTransfer& t, const RetryPolicy& retry,
                  const std::atomic<bool>& stop) {
  const auto& etag = t.remote.etag;
  if (!blobPresent(cache, etag)) {
    FileLock lock(cache.blobLock(etag), [&] { spdlog::info("{}: another process is downloading {}; waiting for it", api.name(), t.path); });
    if (!blobPresent(cache, etag)) {
      fs::create_directories(cache.blob(etag).parent_path());
      const fs::path partial = cache.incompleteBlob(etag);
      fetchBlob(api, t, partial, retry, stop);
      if (stop) return;
      std::error_code ec;
      fs::rename(partial, cache.blob(etag), ec);
      if (ec) throw InputError(cache.blob(etag).string(), "cannot be made from its download: " + ec.message());
    }
  }
  t.done = t.remote.size;
  cache.link(t.remote.commit, t.path, etag);
  t.finished = true;
}

}  // namespace posgeom::hub
