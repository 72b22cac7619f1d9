#include "posgeom/hub/hub_api.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/hub/repo_files.h"
#include "posgeom/io/hub_cache.h"

namespace posgeom::hub {
namespace {

constexpr std::size_t kMaxApiAnswer = 64u << 20;  // a repository of ~300k files
constexpr std::size_t kQuotedChars = 160;
constexpr int64_t kMaxFileSize = int64_t{1} << 50;
constexpr int kHubRedirects = 5;
constexpr int kMetadataTries = 3;

// A Location as an absolute address: "/path" is on the asking URL's origin.
std::string absoluteUrl(const std::string& from, const std::string& location) {
  return location.rfind("/", 0) == 0 && location.rfind("//", 0) != 0 ? urlOrigin(from) + location : location;
}

std::string unquoted(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

// An ETag becomes a file name in blobs/: only what cannot name another path.
bool isSafeEtag(const std::string& etag) {
  return !etag.empty() && etag.size() <= 128 &&
         std::all_of(etag.begin(), etag.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
}

int64_t sizeOf(const std::string& text) {
  if (text.empty() || text.size() > 18 || !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return -1;
  const int64_t size = std::stoll(text);
  return size <= kMaxFileSize ? size : -1;
}

// The hub's own message from an error page, cut to one short printable line.
std::string hubMessage(const HttpResponse& r) {
  std::string text = r.header("x-error-message");
  if (text.empty()) {
    const auto json = nlohmann::json::parse(r.body, nullptr, false);
    if (json.is_object() && json.contains("error") && json["error"].is_string()) text = json["error"].get<std::string>();
  }
  return text.empty() ? "" : " (\"" + io::printableText(text, kQuotedChars) + "\")";
}

}  // namespace

bool isCommitId(const std::string& s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool isHubName(const std::string& name) {
  if (name.empty() || name.size() > 200 || std::count(name.begin(), name.end(), '/') > 1) return false;
  if (name.front() == '/' || name.back() == '/' || name.front() == '.' || name.find("..") != std::string::npos ||
      name.find("--") != std::string::npos)
    return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/'; });
}

HubApi::HubApi(HubSettings settings, std::string name) : settings_(std::move(settings)), name_(std::move(name)) {}

std::vector<std::string> HubApi::headersFor(const std::string& url) const {
  if (settings_.token.empty() || urlOrigin(url) != urlOrigin(settings_.endpoint)) return {};
  return {"Authorization: Bearer " + settings_.token};
}

void HubApi::refuse(const HttpResponse& r, const std::string& what) const {
  const std::string code = r.header("x-error-code");
  const std::string at = " on " + shownUrl(settings_.endpoint);
  if (code == "GatedRepo")
    throw InputError(name_, settings_.token.empty()
                                ? "a gated model" + at + ": accept its terms on its page, then " + tokenAdvice(settings_) +
                                      " to a token of that account"
                                : "a gated model" + at + " that " + tokenAdvice(settings_) +
                                      " may not read: accept its terms on its page with that token's account");
  if (code == "EntryNotFound") throw InputError(name_, what + " is not in the repository" + at + hubMessage(r));
  if (r.status == 401 && code.empty() && !settings_.token.empty())
    throw InputError(name_, "the hub refused " + tokenAdvice(settings_) + " (HTTP 401): it is invalid or expired; make a new one");
  if (r.status == 404 && code.empty() && what.rfind("the revision", 0) != 0)  // a listed file the hub does not serve
    throw InputError(name_, what + " is not in the repository" + at + " (HTTP 404)");
  if (code == "RepoNotFound" || r.status == 404 || r.status == 401)
    throw InputError(name_, "no such model" + at + ", or a private one: check the name" +
                                (settings_.token.empty() ? ", or " + tokenAdvice(settings_) + " to a token that may read it"
                                                         : " (" + tokenAdvice(settings_) + " was sent)"));
  if (r.status == 403)
    throw InputError(name_, settings_.token.empty()
                                ? "the hub refused access" + at + hubMessage(r) + " (HTTP 403): " + tokenAdvice(settings_) + " to a token that may read it"
                                : tokenAdvice(settings_) + " may not read it" + at + hubMessage(r) + ": use a token that may");
  throw InputError(name_, shownUrl(settings_.endpoint) + " answered HTTP " + std::to_string(r.status) + " for " + what + hubMessage(r) +
                              (r.status == 429 || r.status >= 500 ? "; try again later" : ""));
}

void HubApi::unreachable(const TransportError& e) const {
  throw InputError(name_, "cannot reach " + shownUrl(settings_.endpoint) + " (" + e.what() +
                              "): check the network or HF_ENDPOINT; where the model is cached elsewhere, point HF_HUB_CACHE there");
}

HttpResponse HubApi::ask(const HttpRequest& request) {
  // A busy hub (429, 5xx) or a timed-out answer is asked again, twice, after 1 and 2 s.
  for (int attempt = 1;; ++attempt) {
    try {
      auto r = http_.perform(request);
      if ((r.status != 429 && r.status < 500) || attempt == kMetadataTries) return r;
    } catch (const TransportError& e) {
      if (!e.transient() || attempt == kMetadataTries) unreachable(e);
    }
    std::this_thread::sleep_for(std::chrono::seconds(attempt));
  }
}

RepoRevision HubApi::revision(const std::string& revision) {
  HttpRequest request;
  request.url = settings_.endpoint + "/api/models/" + urlEncoded(name_, true) + "/revision/" + urlEncoded(revision, false);
  request.headers = headersFor(request.url);
  request.total_timeout_s = settings_.metadata_timeout_s * 6;  // a big repository's listing
  request.follow_redirects = true;                             // a renamed repository
  request.connect_timeout_s = settings_.metadata_timeout_s;
  request.max_body = kMaxApiAnswer;
  const HttpResponse r = ask(request);
  if (r.status != 200 && r.header("x-error-code") == "RevisionNotFound")
    throw InputError(option::kRevision, "'" + revision.substr(0, 64) + "' is not a branch, tag or commit of " + name_ + " on " +
                                           shownUrl(settings_.endpoint));
  if (r.status != 200) refuse(r, "the revision '" + revision.substr(0, 64) + "'");
  const auto json = nlohmann::json::parse(r.body, nullptr, false);
  const std::string where = request.url;
  if (!json.is_object() || !json.contains("sha") || !json["sha"].is_string() || !isCommitId(json["sha"].get<std::string>()))
    throw InputError(name_, shownUrl(where) + " answered without a commit id (\"sha\"): is HF_ENDPOINT a Hugging Face hub?");
  RepoRevision out{json["sha"].get<std::string>(), {}};
  std::string lowered = revision;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (isCommitId(lowered) && out.commit != lowered)  // a pinned commit is that commit or nothing
    throw InputError(name_, "the hub answered commit " + out.commit + " for --revision " + revision + ": is HF_ENDPOINT a Hugging Face hub?");
  if (json.contains("siblings") && json["siblings"].is_array())
    for (const auto& s : json["siblings"])
      if (s.is_object() && s.contains("rfilename") && s["rfilename"].is_string()) out.files.push_back(s["rfilename"].get<std::string>());
  return out;
}

RemoteFile HubApi::file(const std::string& commit, const std::string& path) {
  HttpRequest request;
  request.url = settings_.endpoint + "/" + urlEncoded(name_, true) + "/resolve/" + commit + "/" + urlEncoded(path, true);
  request.headers = headersFor(request.url);
  request.head = true;
  request.total_timeout_s = settings_.metadata_timeout_s;
  request.connect_timeout_s = settings_.metadata_timeout_s;
  HttpResponse r;
  bool redirect = false;
  // A renamed repository (gpt2 -> openai-community/gpt2) redirects within the hub: followed,
  // as huggingface_hub does; a redirect to the file store ends the question there.
  for (int hop = 0; hop <= kHubRedirects; ++hop) {
    r = ask(request);
    redirect = r.status >= 300 && r.status < 400 && !r.header("location").empty();
    if (!redirect) break;
    const std::string target = absoluteUrl(request.url, r.header("location"));
    if (urlOrigin(target) != urlOrigin(settings_.endpoint) || !r.header("x-repo-commit").empty()) break;
    request.url = target;
  }
  if (r.status != 200 && !redirect) refuse(r, path);
  RemoteFile f;
  f.commit = r.header("x-repo-commit");
  f.etag = unquoted(!r.header("x-linked-etag").empty() ? r.header("x-linked-etag") : r.header("etag"));
  f.size = sizeOf(!r.header("x-linked-size").empty() ? r.header("x-linked-size") : redirect ? "" : r.header("content-length"));
  f.location = redirect ? absoluteUrl(request.url, r.header("location")) : request.url;
  if (!isCommitId(f.commit) || f.commit != commit)
    throw InputError(name_, path + ": the hub's answer names commit '" + f.commit.substr(0, 48) + "', not " + commit);
  if (!isSafeEtag(f.etag)) throw InputError(name_, path + ": the hub's answer has no usable ETag");
  if (f.size < 0) throw InputError(name_, path + ": the hub's answer has no file size");
  if (f.location.rfind("http://", 0) != 0 && f.location.rfind("https://", 0) != 0)
    throw InputError(name_, path + ": the hub redirects to '" + f.location.substr(0, 64) + "', not an http(s) address");
  return f;
}

}  // namespace posgeom::hub
