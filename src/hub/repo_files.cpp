#include "posgeom/hub/repo_files.h"

#include <fnmatch.h>

#include <algorithm>
#include <set>

#include "posgeom/base/error.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/io/json_file.h"

namespace posgeom::hub {
namespace {

constexpr std::size_t kQuotedNameChars = 96;
constexpr const char* kSafetensors = "model.safetensors";
constexpr const char* kSafetensorsIndex = "model.safetensors.index.json";
constexpr const char* kBin = "pytorch_model.bin";
constexpr const char* kBinIndex = "pytorch_model.bin.index.json";

bool has(const std::vector<std::string>& files, const std::string& file) {
  return std::find(files.begin(), files.end(), file) != files.end();
}

bool readByPosgeom(const std::string& file) {
  const auto dot = file.rfind('.');
  const std::string ext = dot == std::string::npos ? "" : file.substr(dot);
  return ext == ".json" || ext == ".txt" || ext == ".model";
}

std::vector<std::string> shardsOf(const std::string& name, const std::vector<std::string>& repo_files,
                                  const std::filesystem::path& index) {
  std::vector<std::string> shards;
  for (const auto& shard : indexShards(index)) {
    if (!isSafeRepoPath(shard)) throw InputError(index.string(), "names a shard '" + io::printableText(shard, kQuotedNameChars) + "' outside the repository");
    if (!has(repo_files, shard))
      throw InputError(name, index.filename().string() + " names the shard " + io::printableText(shard, kQuotedNameChars) + ", which the repository does not hold");
    shards.push_back(shard);
  }
  return shards;
}

}  // namespace

std::vector<std::string> indexShards(const std::filesystem::path& index) {
  const auto json = io::readJsonFile(index);
  if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object())
    throw InputError(index.string(), "has no \"weight_map\" object: not a weights index");
  std::set<std::string> shards;
  for (const auto& [tensor, shard] : json["weight_map"].items()) {
    if (!shard.is_string()) throw InputError(index.string(), "maps tensor '" + io::printableText(tensor, kQuotedNameChars) + "' to a non-string");
    shards.insert(shard.get<std::string>());
  }
  return {shards.begin(), shards.end()};
}

bool isSafeRepoPath(const std::string& path) {
  if (path.empty() || path.size() > 1024 || path.front() == '/' || path.back() == '/') return false;
  if (std::any_of(path.begin(), path.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f || c == '\\'; })) return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = std::min(path.find('/', start), path.size());
    const auto part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

std::vector<std::string> configFiles(const std::string& name, const std::vector<std::string>& repo_files, ModelParts parts) {
  if (parts != ModelParts::kTokenizer && !has(repo_files, "config.json"))
    throw InputError(name, "the repository has no config.json: not a Transformers model posgeom can read");
  const bool safetensors = has(repo_files, kSafetensors) || has(repo_files, kSafetensorsIndex);
  std::vector<std::string> chosen;
  for (const auto& f : repo_files) {
    if (f.find('/') != std::string::npos || !readByPosgeom(f) || !isSafeRepoPath(f)) continue;
    if (safetensors && f == kBinIndex) continue;
    if (has(repo_files, kSafetensors) && f == kSafetensorsIndex) continue;  // model.safetensors wins, as in the loader
    chosen.push_back(f);
  }
  return chosen;
}

std::string weightIndexFile(const std::vector<std::string>& repo_files) {
  if (has(repo_files, kSafetensors)) return "";
  if (has(repo_files, kSafetensorsIndex)) return kSafetensorsIndex;
  if (has(repo_files, kBin)) return "";
  return has(repo_files, kBinIndex) ? kBinIndex : "";
}

std::vector<std::string> weightFiles(const std::string& name, const std::vector<std::string>& repo_files,
                                     const std::filesystem::path& snapshot) {
  if (has(repo_files, kSafetensors)) return {kSafetensors};
  const auto index = weightIndexFile(repo_files);
  if (index == kSafetensorsIndex) return shardsOf(name, repo_files, snapshot / index);
  if (has(repo_files, kBin)) return {kBin};
  if (index == kBinIndex) return shardsOf(name, repo_files, snapshot / index);
  throw InputError(name, std::string("the repository has no weights posgeom reads (") + kSafetensors + ", " + kSafetensorsIndex +
                             " or " + kBin + ")");
}

std::vector<std::string> filesMatching(const std::string& name, const std::vector<std::string>& repo_files,
                                       const std::vector<std::string>& globs) {
  std::vector<std::string> chosen;
  for (const auto& f : repo_files) {
    if (!isSafeRepoPath(f)) continue;
    if (std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return fnmatch(g.c_str(), f.c_str(), 0) == 0; }))
      chosen.push_back(f);
  }
  if (chosen.empty()) {
    std::string listed;
    for (const auto& g : globs) listed += (listed.empty() ? "'" : ", '") + g + "'";
    throw InputError("--include", listed + " matches no file of " + name);
  }
  return chosen;
}

}  // namespace posgeom::hub
