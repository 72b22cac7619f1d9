#pragma once
// Which files of a hub repository posgeom fetches: what it reads and nothing else (a
// Mistral repo's consolidated.safetensors, a Llama repo's original/ weights, ONNX and GGUF
// exports are left on the hub). Paths from the hub are untrusted: one that could leave the
// snapshot is refused.
#include <filesystem>
#include <string>
#include <vector>

namespace posgeom::hub {

// What a command reads of a model: tokenize its tokenizer; analyze and forward first its
// config and tokenizer (to check their options against the config before the weights
// come), then the weights too.
enum class ModelParts { kTokenizer, kConfig, kWeights };

// A relative path that stays inside its directory: no '..', no leading '/', no '\\', no
// empty or '.' parts, no control bytes.
bool isSafeRepoPath(const std::string& path);

// The top-level config, tokenizer and index files (.json, .txt, .model), less a
// pytorch_model.bin index where safetensors exist. InputError naming `name` when the
// repository has no config.json and `parts` are the weights (a tokenizer needs none).
std::vector<std::string> configFiles(const std::string& name, const std::vector<std::string>& repo_files,
                                     ModelParts parts = ModelParts::kWeights);

// The weights, as the loader picks them: model.safetensors; else the shards that
// model.safetensors.index.json (already in `snapshot`) names; else pytorch_model.bin or
// the shards of its index. InputError naming `name` when there are none, or when an
// index names a shard the repository lacks or a path outside it.
std::vector<std::string> weightFiles(const std::string& name, const std::vector<std::string>& repo_files,
                                     const std::filesystem::path& snapshot);
// The shard files a weights index (model.safetensors.index.json) names, sorted, each once;
// whether they exist is not asked. InputError naming the index when it is not one.
std::vector<std::string> indexShards(const std::filesystem::path& index);
// The index file weightFiles reads, if the repository's weights are sharded ("" otherwise).
std::string weightIndexFile(const std::vector<std::string>& repo_files);

// The files matching any of `globs` (shell patterns over the whole path, '*' crossing '/',
// as huggingface_hub's allow_patterns). InputError naming --include when none match.
std::vector<std::string> filesMatching(const std::string& name, const std::vector<std::string>& repo_files,
                                       const std::vector<std::string>& globs);

}  // namespace posgeom::hub
