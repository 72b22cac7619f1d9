#include "posgeom/io/hub_cache.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <vector>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/io/path_entry.h"

namespace posgeom::io {
namespace fs = std::filesystem;

namespace {

// The user's home as Python's os.path.expanduser finds it: $HOME, else the passwd entry.
fs::path homeDir(const EnvLookup& env) {
  if (auto v = env("HOME")) return *v;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return ".";
}

}  // namespace

fs::path expandedUser(const std::string& value, const EnvLookup& env) {
  if (value == "~") return homeDir(env);
  if (value.rfind("~/", 0) == 0) return homeDir(env) / value.substr(2);
  return value;
}

fs::path huggingFaceHome(const EnvLookup& env) {
  if (auto v = env("HF_HOME")) return expandedUser(*v, env);
  if (auto v = env("XDG_CACHE_HOME")) return expandedUser(*v, env) / "huggingface";
  return homeDir(env) / ".cache" / "huggingface";
}

fs::path hubCacheRoot(const EnvLookup& env) {
  if (auto v = env("HF_HUB_CACHE")) return expandedUser(*v, env);
  if (auto v = env("HUGGINGFACE_HUB_CACHE")) return expandedUser(*v, env);  // the older name huggingface_hub still reads
  return huggingFaceHome(env) / "hub";
}

std::string snapshotCommit(const fs::path& dir) {
  auto clean = dir.lexically_normal();
  if (!clean.has_filename()) clean = clean.parent_path();  // a trailing slash
  return clean.parent_path().filename() == "snapshots" ? clean.filename().string() : "";
}

std::string printableText(const std::string& text, std::size_t max_chars) {
  std::string p;
  for (char c : text.substr(0, max_chars)) p += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return text.size() > max_chars ? p + "..." : p;
}

std::string hubRepoFolder(const std::string& name) {
  std::string folder = "models--";
  for (char c : name) folder += (c == '/') ? std::string("--") : std::string(1, c);
  return folder;
}

namespace {

// Everything in the cache is read as untrusted: a refs file holds a commit hash (40 hex
// digits from huggingface_hub; tests and hand-made caches use shorter ones), nothing else.
constexpr std::size_t kRefBytesRead = 256;
constexpr std::size_t kQuotedChars = 48;
constexpr std::size_t kListed = 6;

bool isCommitHash(const std::string& s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string printable(const std::string& s) { return printableText(s, kQuotedChars); }
std::string inQuotes(const std::string& s) { return "'" + printable(s) + "'"; }

std::string listed(std::vector<std::string> names) {
  if (names.empty()) return "none";
  std::sort(names.begin(), names.end());
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < kListed; ++i) s += (i ? ", " : "") + printable(names[i]);
  if (names.size() > kListed) s += " and " + std::to_string(names.size() - kListed) + " more";
  return s;
}

std::vector<std::string> snapshotNames(const fs::path& repo) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(repo / "snapshots", ec))
    if (entry.is_directory(ec)) names.push_back(entry.path().filename().string());
  return names;
}

std::string refNames(const fs::path& repo) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(repo / "refs", ec))
    if (entry.is_regular_file(ec)) names.push_back(fs::relative(entry.path(), repo / "refs").string());
  return listed(names);
}

std::string downloadAgain(const std::string& name, const std::string& revision) {
  return "download it again: `posgeom download " + name + (revision.empty() ? "" : " --revision " + revision) + "`";
}

// The commit a refs file names: read at most kRefBytesRead bytes, never followed as a path.
std::string readRef(const fs::path& file) {
  std::error_code ec;
  const auto status = fs::status(file, ec);
  if (status.type() == fs::file_type::not_found) throw InputError(file.string(), "is a link to a missing file, not a commit hash");
  if (status.type() == fs::file_type::directory) throw InputError(file.string(), "is a directory, not a file holding a commit hash");
  if (status.type() != fs::file_type::regular) throw InputError(file.string(), "is not a regular file holding a commit hash");
  std::ifstream in(file, std::ios::binary);
  std::string text(kRefBytesRead + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad() || (!in && !in.eof())) throw InputError(file.string(), "cannot be read");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kRefBytesRead)
    throw InputError(file.string(), "holds " + std::to_string(fs::file_size(file, ec)) + " bytes, not a commit hash (40 hex digits)");
  const auto last = text.find_last_not_of(" \t\r\n");
  text.erase(last == std::string::npos ? 0 : last + 1);  // a trailing newline, as an editor leaves it
  if (text.empty()) throw InputError(file.string(), "is empty: it should hold the commit hash of the snapshot to load");
  if (!isCommitHash(text)) throw InputError(file.string(), "holds " + inQuotes(text) + ", not a commit hash (40 hex digits)");
  return text;
}

// The snapshot of the commit a refs file names; never another one.
fs::path snapshotOfRef(const fs::path& repo, const std::string& ref, const std::string& name) {
  const fs::path file = repo / "refs" / ref;
  const auto commit = readRef(file);
  if (!fs::is_directory(repo / "snapshots" / commit))
    throw NotCached(file.string(), "names commit " + commit + ", which has no snapshot in " + (repo / "snapshots").string() +
                                        " (snapshots there: " + listed(snapshotNames(repo)) + "); " + downloadAgain(name, ref));
  return repo / "snapshots" / commit;
}

// `revision` of the cached repo: a ref (branch, tag), a snapshot's commit or its unique prefix.
fs::path snapshotAt(const fs::path& repo, const std::string& name, const std::string& revision) {
  const bool plain = revision.find("..") == std::string::npos && revision.front() != '/';
  if (plain && entryExists(repo / "refs" / revision)) return snapshotOfRef(repo, revision, name);
  std::vector<std::string> matches;
  const bool hex = revision.size() >= 7 && std::all_of(revision.begin(), revision.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  for (const auto& snapshot : snapshotNames(repo))
    if (snapshot == revision || (hex && snapshot.rfind(revision, 0) == 0)) matches.push_back(snapshot);
  if (matches.size() == 1) return repo / "snapshots" / matches[0];
  if (matches.size() > 1)
    throw InputError(option::kRevision, "'" + revision + "' is a prefix of " + std::to_string(matches.size()) + " commits of " + name +
                                       " in the Hugging Face cache (" + listed(matches) + "): give more of its digits");
  throw NotCached(option::kRevision, "'" + revision + "' is not a branch, tag or commit of " + name +
                                        " in the Hugging Face cache (refs there: " + refNames(repo) + "); download it first: `posgeom download " +
                                        name + " --revision " + revision + "`");
}

// Files posgeom reads: configs, tokenizers, weights. Other files of the repo do not matter.
bool readByPosgeom(const fs::path& file) {
  const auto ext = file.extension().string();
  return ext == ".json" || ext == ".safetensors" || ext == ".txt" || ext == ".model";
}

// A snapshot's files are links to blobs; an interrupted or pruned download leaves a link to
// no blob (or to a blob still named *.incomplete). Said as such, not as a missing file.
void refuseMissingBlobs(const fs::path& snapshot, const std::string& name) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(snapshot, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto& file = it->path();
    if (!it->is_symlink(ec) || fs::exists(file, ec) || !readByPosgeom(file)) continue;
    auto blob = fs::read_symlink(file, ec);
    if (blob.is_relative()) blob = (file.parent_path() / blob).lexically_normal();
    const bool partial = fs::exists(blob.string() + ".incomplete", ec);
    throw NotCached(file.string(), "is a link to a missing blob " + blob.string() +
                                        (partial ? " (an interrupted download: its .incomplete file is there); "
                                                 : " (an interrupted download?); ") +
                                        downloadAgain(name, snapshotCommit(snapshot)));
  }
}

}  // namespace

fs::path resolveModelDir(const std::string& name, const EnvLookup& env, const std::string& revision) {
  if (name.empty()) throw InputError(option::kModel, "empty model name");
  if (fs::is_directory(name)) {
    if (!revision.empty()) throw InputError(option::kRevision, "applies to a hub name, not to the directory '" + name + "'");
    return fs::path(name);
  }
  const fs::path root = hubCacheRoot(env);
  const fs::path repo = root / hubRepoFolder(name);
  const std::string how = "; download it first: `posgeom download " + name + "`, or pass the model's directory";
  if (name.front() == '/' || name.front() == '.' || name.rfind("~", 0) == 0 ||
      std::count(name.begin(), name.end(), '/') > 1)
    throw InputError(name, "model directory does not exist");
  if (!fs::is_directory(repo / "snapshots"))
    throw NotCached(name, "not a directory, and not in the Hugging Face cache (looked in " + repo.string() + ")" + how);
  const auto snapshots = snapshotNames(repo);
  if (snapshots.empty()) throw NotCached(name, "the Hugging Face cache has no snapshot in " + (repo / "snapshots").string() + how);
  // No revision: refs/main, as huggingface_hub reads it offline. Without it the cache does
  // not say which snapshot is main's, and huggingface_hub refuses; so does posgeom.
  if (revision.empty() && !entryExists(repo / "refs" / "main"))
    throw NotCached((repo / "refs" / "main").string(),
                    "is missing, so which snapshot is branch main is unknown (snapshots there: " + listed(snapshots) +
                         "): give --revision with one of them, or " + downloadAgain(name, ""));
  const fs::path snapshot = revision.empty() ? snapshotOfRef(repo, "main", name) : snapshotAt(repo, name, revision);
  refuseMissingBlobs(snapshot, name);
  return snapshot;
}

}  // namespace posgeom::io
