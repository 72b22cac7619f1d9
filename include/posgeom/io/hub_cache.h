#pragma once
// `--model gpt2` or `--model meta-llama/Llama-2-7b-hf`: a directory, or a name in the
// local Hugging Face cache. Nothing is downloaded here (hub/model_source.h downloads).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "posgeom/base/environment.h"
#include "posgeom/base/error.h"

namespace posgeom::io {

using posgeom::EnvLookup;
using posgeom::processEnv;

// The cache lacks what was asked (no repo, no snapshot of the revision, no refs/main, a
// link to a missing blob): what a download would supply, as against a cache that holds
// something wrong. `reason()` is the message without the name in front.
class NotCached : public InputError {
 public:
  NotCached(const std::string& where, const std::string& reason) : InputError(where, reason), reason_(reason) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// Untrusted text (from the cache or the hub) for a one-line message: its first
// `max_chars`, control bytes as '?', "..." where it was cut.
std::string printableText(const std::string& text, std::size_t max_chars);

// models--<org>--<name>: the repo's folder in the cache.
std::string hubRepoFolder(const std::string& name);

// "~" and "~/..." as the user's home ($HOME, else the passwd entry), as huggingface_hub
// expands the paths it reads from the environment.
std::filesystem::path expandedUser(const std::string& value, const EnvLookup& env);
// $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface (huggingface_hub's order).
std::filesystem::path huggingFaceHome(const EnvLookup& env);
// $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else <huggingFaceHome>/hub.
std::filesystem::path hubCacheRoot(const EnvLookup& env);

// An existing directory is used as is. Otherwise `name` is looked up as
// <root>/models--<org>--<name>/snapshots/<commit>, as from_pretrained(revision=...) does:
// `revision` a branch or tag (refs/<revision>), a commit or a unique prefix of one (7+ hex
// digits); empty: refs/main. Nothing read there is trusted: a refs file must hold the hex
// commit of a snapshot that is there (never a path, never another snapshot instead), and
// the snapshot's files must not be links to missing blobs. Throws NotCached where the
// cache lacks the model, InputError naming the file at fault where it holds a wrong one.
std::filesystem::path resolveModelDir(const std::string& name, const EnvLookup& env, const std::string& revision = "");

// The commit of a hub-cache snapshot directory (.../snapshots/<commit>); empty otherwise.
std::string snapshotCommit(const std::filesystem::path& dir);

}  // namespace posgeom::io
