#pragma once
// `posgeom download NAME`: a model fetched ahead of a job (on a login node, before a batch
// job without network) into the Hugging Face cache; the snapshot's path printed.
#include <filesystem>
#include <string>
#include <vector>

namespace posgeom::jobs {

struct DownloadJob {
  std::string model;                 // a hub name
  std::string revision;              // branch, tag or commit (empty: main)
  std::vector<std::string> include;  // non-empty: exactly the files matching these globs
};

// Always asks the hub which commit the revision is now (refs/<revision> follows it) and
// fetches what the cache lacks of it. With HF_HUB_OFFLINE=1: the cached snapshot, if it
// holds the model, else an InputError.
std::filesystem::path runDownloadJob(const DownloadJob& job);

}  // namespace posgeom::jobs
