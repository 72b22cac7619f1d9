#pragma once
// The two questions posgeom asks the hub before it downloads: which commit a revision is
// and what files it holds (GET /api/models/<name>/revision/<rev>), and one file's commit,
// ETag, size and store address (HEAD /<name>/resolve/<commit>/<file>, not followed).
// Every refusal becomes one InputError line naming the model and what to do.
#include <cstdint>
#include <string>
#include <vector>

#include "posgeom/hub/hub_settings.h"
#include "posgeom/hub/http_client.h"

namespace posgeom::hub {

struct RepoRevision {
  std::string commit;               // 40 hex digits
  std::vector<std::string> files;   // the repository's paths at that commit
};

struct RemoteFile {
  std::string commit;    // X-Repo-Commit
  std::string etag;      // X-Linked-Etag (an LFS file's SHA-256), else ETag (a git blob id); unquoted
  int64_t size = -1;     // X-Linked-Size, else Content-Length
  std::string location;  // where the bytes are: the store's address after a redirect, else the resolve URL
};

// A commit id as the hub writes them.
bool isCommitId(const std::string& s);
// A hub name posgeom downloads: "name" or "org/name" of letters, digits, '-', '_', '.'.
bool isHubName(const std::string& name);

class HubApi {
 public:
  HubApi(HubSettings settings, std::string name);
  RepoRevision revision(const std::string& revision);
  RemoteFile file(const std::string& commit, const std::string& path);
  // Headers for a request to `url`: the token only where the hub itself is asked.
  std::vector<std::string> headersFor(const std::string& url) const;
  const HubSettings& settings() const { return settings_; }
  const std::string& name() const { return name_; }

  // The one line said when the hub refuses (`what`: "the revision 'x'", "config.json").
  [[noreturn]] void refuse(const HttpResponse& response, const std::string& what) const;
  // The one line said when the hub cannot be reached.
  [[noreturn]] void unreachable(const TransportError& e) const;

 private:
  HttpResponse ask(const HttpRequest& request);
  HubSettings settings_;
  std::string name_;
  HttpClient http_;
};

}  // namespace posgeom::hub
