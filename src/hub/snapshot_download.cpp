#include "posgeom/hub/snapshot_download.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <spdlog/spdlog.h>
#include <thread>

#include "posgeom/base/byte_size.h"
#include "posgeom/base/error.h"
#include "posgeom/hub/hub_api.h"
#include "posgeom/hub/repo_cache.h"

namespace posgeom::hub {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
// Kept free beyond what the files need: the rest of the disk's users.
constexpr int64_t kSpareBytes = int64_t{1} << 30;

std::string rateAndEta(int64_t done_now, int64_t total, double seconds) {
  if (seconds <= 0 || done_now <= 0) return "";
  const double rate = static_cast<double>(done_now) / seconds;
  const double eta = static_cast<double>(std::max<int64_t>(0, total)) / rate;
  return ", " + formatBytes(static_cast<int64_t>(rate)) + "/s, ETA " + std::to_string(static_cast<int64_t>(eta + 0.5)) + " s";
}

// The nearest existing directory at or above `dir`: where fs::space can ask.
fs::path existingAncestor(fs::path dir) {
  std::error_code ec;
  while (!dir.empty() && !fs::exists(dir, ec)) dir = dir.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

void checkDiskSpace(const HubApi& api, const RepoCache& cache, const std::vector<std::unique_ptr<BlobTransfer>>& files) {
  int64_t needed = 0;
  for (const auto& f : files) needed += bytesMissing(cache, f->remote);
  if (needed == 0) return;
  const fs::path where = existingAncestor(cache.repo() / "blobs");
  std::error_code ec;
  const auto space = fs::space(where, ec);
  if (ec) return;  // a file system that cannot say: the writes will
  const auto free = static_cast<int64_t>(space.available);
  const int64_t spare = std::min(kSpareBytes, needed);
  if (free < needed + spare)
    throw InputError(api.name(), "needs " + formatBytes(needed) + " more in " + where.string() + " (and " + formatBytes(spare) +
                                     " to spare), where " + formatBytes(free) + " are free: free some, or point HF_HUB_CACHE at a larger disk");
}

class Progress {
 public:
  Progress(std::string name, const std::vector<std::unique_ptr<BlobTransfer>>& files) : name_(std::move(name)), files_(files) {
    for (const auto& f : files_) {
      total_ += f->remote.size;
      start_done_ += f->done;
    }
  }
  void line() const {
    const double s = std::chrono::duration<double>(Clock::now() - start_).count();
    int64_t done = 0;
    for (const auto& f : files_) {
      done += f->done;
      if (f->finished || f->done == 0) continue;
      spdlog::info("download {}: {} {} of {} ({}%)", name_, f->path, formatBytes(f->done), formatBytes(f->remote.size),
                   f->remote.size ? 100 * f->done / f->remote.size : 100);
    }
    spdlog::info("download {}: {} of {} in {} file{}{}", name_, formatBytes(done), formatBytes(total_), files_.size(),
                 files_.size() == 1 ? "" : "s",
                 rateAndEta(done - start_done_, total_ - done, s));
  }

 private:
  std::string name_;
  const std::vector<std::unique_ptr<BlobTransfer>>& files_;
  int64_t total_ = 0, start_done_ = 0;
  Clock::time_point start_ = Clock::now();
};

// Fetches `paths` of `commit`: their headers first (sizes for the disk check), then the
// bytes, `parallel` files at once.
void fetchFiles(HubApi& api, const RepoCache& cache, const std::string& commit, const std::vector<std::string>& paths,
                const SnapshotRequest& request) {
  std::vector<std::unique_ptr<BlobTransfer>> files;
  std::set<std::string> seen;  // a listing that names a path twice fetches it once
  for (const auto& path : paths) {
    if (!seen.insert(path).second) continue;
    auto t = std::make_unique<BlobTransfer>();
    t->path = path;
    t->remote = api.file(commit, path);
    t->done = t->remote.size - bytesMissing(cache, t->remote);
    files.push_back(std::move(t));
  }
  checkDiskSpace(api, cache, files);
  std::atomic<bool> stop{false};
  std::mutex m;
  std::condition_variable cv;
  std::exception_ptr failure;
  std::size_t next = 0, ended = 0;
  auto worker = [&] {
    for (;;) {
      BlobTransfer* t = nullptr;
      {
        std::lock_guard<std::mutex> lock(m);
        if (next == files.size() || failure) break;
        t = files[next++].get();
      }
      try {
        const bool had = blobPresent(cache, t->remote.etag);
        const auto start = Clock::now();
        downloadBlob(api, cache, *t, request.retry, stop);
        if (!had && t->finished)
          spdlog::info("download {}: {} ({}) in {:.1f} s", api.name(), t->path, formatBytes(t->remote.size),
                       std::chrono::duration<double>(Clock::now() - start).count());
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!failure) failure = std::current_exception();
        stop = true;
      }
    }
    std::lock_guard<std::mutex> lock(m);
    ++ended;
    cv.notify_all();
  };
  const auto workers = static_cast<std::size_t>(std::clamp<int>(request.parallel_files, 1, 64));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < std::min(workers, files.size()); ++i) threads.emplace_back(worker);
  Progress progress(api.name(), files);
  {
    std::unique_lock<std::mutex> lock(m);
    const auto every = std::chrono::duration<double>(request.progress_every_s);
    while (ended < threads.size())
      if (!cv.wait_for(lock, every, [&] { return ended == threads.size(); }) && !failure) progress.line();
  }
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

fs::path downloadSnapshot(const HubSettings& settings, const SnapshotRequest& request) {
  const std::string revision = request.revision.empty() ? "main" : request.revision;
  if (!isSafeRepoPath(revision)) throw InputError("--revision", "'" + revision.substr(0, 64) + "' is not a branch, tag or commit name");
  if (settings.offline)
    throw InputError(request.name, "HF_HUB_OFFLINE is set, so nothing is downloaded: unset it, or download where the network is");
  HubApi api(settings, request.name);
  const RepoCache cache(settings.cache, request.name);
  const auto listing = api.revision(revision);
  spdlog::info("download {}: {} at commit {} from {} into {}", request.name, revision, listing.commit, shownUrl(settings.endpoint),
               cache.repo().string());
  if (!request.include.empty()) {
    fetchFiles(api, cache, listing.commit, filesMatching(request.name, listing.files, request.include), request);
  } else {
    fetchFiles(api, cache, listing.commit, configFiles(request.name, listing.files, request.parts), request);
    if (request.parts == ModelParts::kWeights)
      fetchFiles(api, cache, listing.commit, weightFiles(request.name, listing.files, cache.snapshot(listing.commit)), request);
  }
  if (request.write_ref) cache.writeRef(revision, listing.commit);
  return cache.snapshot(listing.commit);
}

}  // namespace posgeom::hub
