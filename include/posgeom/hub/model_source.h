#pragma once
// Where a command's --model is: a directory as given; a hub name from the Hugging Face
// cache when the snapshot there holds what the command reads; else downloaded from the
// hub into that cache (never with HF_HUB_OFFLINE=1). One process per cache downloads a
// repository at a time; the others wait and find it there.
#include <filesystem>
#include <string>

#include "posgeom/base/environment.h"
#include "posgeom/hub/repo_files.h"

namespace posgeom::hub {

// Whether a snapshot (or model directory) holds config.json and, for kWeights, every
// weight file the loader would read; for kTokenizer, a tokenizer file.
bool holdsParts(const std::filesystem::path& dir, ModelParts parts);

std::filesystem::path modelDirectory(const std::string& name, const std::string& revision, ModelParts parts,
                                     const EnvLookup& env);

// `dir` (what modelDirectory gave `revision` for kConfig) with its weights: the same
// snapshot's, downloaded where the cache lacks them; then refs/<revision> names it, where
// no ref does yet. A model directory is returned as it is.
std::filesystem::path withWeights(const std::string& name, const std::string& revision, const std::filesystem::path& dir,
                                  const EnvLookup& env);

}  // namespace posgeom::hub
