#pragma once
// A revision of a hub repository into the Hugging Face cache: the revision resolved to
// its commit, the files chosen (what posgeom reads, or --include's), the disk's free space
// checked, several files at once, a progress line per file and in total, then refs/<rev>.
#include <filesystem>
#include <string>
#include <vector>

#include "posgeom/hub/blob_download.h"
#include "posgeom/hub/hub_settings.h"
#include "posgeom/hub/repo_files.h"

namespace posgeom::hub {

struct SnapshotRequest {
  std::string name;
  std::string revision;                // empty: main
  ModelParts parts = ModelParts::kWeights;
  std::vector<std::string> include;    // non-empty: exactly the files matching these globs
  RetryPolicy retry;
  int parallel_files = 4;              // files fetched at once
  double progress_every_s = 5;         // a progress line this often
  bool write_ref = true;               // false: the caller writes refs/<revision> once the rest is there
};

// The snapshot directory. InputError (one line naming the model) for everything the hub
// refuses, for no network, for too little disk, and for a transfer that fails for good.
std::filesystem::path downloadSnapshot(const HubSettings& settings, const SnapshotRequest& request);

}  // namespace posgeom::hub
