#pragma once
// `--model gpt2` or `--model meta-llama/Llama-2-7b-hf`: a directory, or a name in the
// local Hugging Face cache. Nothing is downloaded.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "posgeom/base/environment.h"

namespace posgeom::io {

using posgeom::EnvLookup;
using posgeom::processEnv;

// $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
std::filesystem::path hubCacheRoot(const EnvLookup& env);

// An existing directory is used as is. Otherwise `name` is looked up as
// <root>/models--<org>--<name>/snapshots/<commit>, as from_pretrained(revision=...) does:
// `revision` a branch or tag (refs/<revision>), a commit or a unique prefix of one (7+ hex
// digits); empty: refs/main. Nothing read there is trusted: a refs file must hold the hex
// commit of a snapshot that is there (never a path, never another snapshot instead), and
// the snapshot's files must not be links to missing blobs. Throws InputError naming the
// file at fault, or saying where it looked and how to download.
std::filesystem::path resolveModelDir(const std::string& name, const EnvLookup& env, const std::string& revision = "");

// The commit of a hub-cache snapshot directory (.../snapshots/<commit>); empty otherwise.
std::string snapshotCommit(const std::filesystem::path& dir);

}  // namespace posgeom::io
