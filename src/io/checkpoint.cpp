#include "posgeom/io/checkpoint.h"

#include <map>
#include <set>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"

namespace posgeom::io {
namespace fs = std::filesystem;
namespace {
constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";
constexpr const char* kPytorchBinName = "pytorch_model.bin";

std::vector<SafetensorsFile> openShards(const fs::path& index_path) {
  const auto index = readJsonFile(index_path);
  const auto map = index.find("weight_map");
  if (map == index.end() || !map->is_object())
    throw InputError(index_path.string(), "missing object 'weight_map'");
  std::map<std::string, std::vector<std::string>> by_file;
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string()) throw InputError(index_path.string(), "weight_map entry '" + tensor + "' is not a file name");
    const auto name = file.get<std::string>();
    if (name.empty() || name.find('/') != std::string::npos || name == "..")
      throw InputError(index_path.string(), "weight_map names a file outside the model directory: '" + name + "'");
    by_file[name].push_back(tensor);
  }
  std::vector<SafetensorsFile> shards;
  for (const auto& [file, tensors] : by_file) {
    const fs::path shard_path = index_path.parent_path() / file;
    if (!fs::exists(shard_path))
      throw InputError(index_path.string(), "shard '" + file + "' listed in weight_map does not exist");
    shards.push_back(SafetensorsFile::open(shard_path));
    for (const auto& t : tensors)
      if (!shards.back().find(t))
        throw InputError(shard_path.string(), "tensor '" + t + "' listed in " + kIndexName + " is not in this shard");
  }
  return shards;
}
}  // namespace

bool Checkpoint::hasSafetensors(const fs::path& dir) {
  return fs::exists(dir / kIndexName) || fs::exists(dir / kSingleName);
}
bool Checkpoint::hasPytorchBin(const fs::path& dir) { return fs::exists(dir / kPytorchBinName); }

Checkpoint Checkpoint::open(const fs::path& dir) {
  Checkpoint c;
  c.dir_ = dir;
  if (fs::exists(dir / kIndexName)) {
    c.shards_ = openShards(dir / kIndexName);
  } else if (fs::exists(dir / kSingleName)) {
    c.shards_.push_back(SafetensorsFile::open(dir / kSingleName));
  } else if (hasPytorchBin(dir)) {
    throw InputError((dir / kPytorchBinName).string(),
                     "cannot read this pytorch_model.bin; convert it to safetensors, e.g. in Python: "
                     "from safetensors.torch import save_file; import torch; "
                     "save_file(torch.load('pytorch_model.bin'), 'model.safetensors')");
  } else {
    throw InputError(dir.string(), "no model weights found (expected model.safetensors, " + std::string(kIndexName) +
                                       " or pytorch_model.bin)");
  }
  std::set<std::string> seen;
  for (const auto& shard : c.shards_)
    for (const auto& [name, view] : shard.tensors())
      if (!seen.insert(name).second)
        throw InputError(shard.path().string(), "tensor '" + name + "' appears in more than one shard");
  return c;
}

const TensorView* Checkpoint::find(const std::string& name) const {
  for (const auto& shard : shards_)
    if (const auto* v = shard.find(name)) return v;
  return nullptr;
}

std::string Checkpoint::fileOf(const std::string& name) const {
  for (const auto& shard : shards_)
    if (shard.find(name)) return shard.path().string();
  return dir_.string();
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto& shard : shards_)
    for (const auto& [name, view] : shard.tensors()) out.push_back(name);
  return out;
}

}  // namespace posgeom::io
