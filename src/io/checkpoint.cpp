#include "posgeom/io/checkpoint.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"

namespace posgeom::io {
namespace fs = std::filesystem;
namespace {
constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";

void addShard(std::map<std::string, TensorView>& views, std::map<std::string, std::string>& file_of,
              const SafetensorsFile& shard) {
  for (const auto& [name, view] : shard.tensors()) {
    if (!views.emplace(name, view).second)
      throw InputError(shard.path().string(), "tensor '" + name + "' appears in more than one shard");
    file_of[name] = shard.path().string();
  }
}

// transformers loads model.safetensors where both it and an index are there (a stale index
// beside a merged file); so does this.
bool usesIndex(const fs::path& dir) {
  std::error_code ec;
  return !fs::exists(dir / kSingleName, ec) && fs::exists(dir / kIndexName, ec);
}

}  // namespace

std::optional<int64_t> countCheckpointTensors(const fs::path& dir) {
  std::error_code ec;
  if (usesIndex(dir)) {
    const auto index = nlohmann::json::parse(std::ifstream(dir / kIndexName), nullptr, false);
    // An empty map is the index's fault, which the loader names.
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object() ||
        index["weight_map"].empty())
      return std::nullopt;
    return static_cast<int64_t>(index["weight_map"].size());
  }
  std::ifstream in(dir / kSingleName, std::ios::binary);
  uint64_t header_len = 0;
  if (!in.read(reinterpret_cast<char*>(&header_len), 8)) return std::nullopt;
  const auto size = fs::file_size(dir / kSingleName, ec);
  if (ec || header_len > size - 8 || header_len > (uint64_t{100} << 20)) return std::nullopt;
  std::string header(static_cast<std::size_t>(header_len), '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_len))) return std::nullopt;
  const auto json = nlohmann::json::parse(header, nullptr, false);
  if (!json.is_object()) return std::nullopt;
  return static_cast<int64_t>(json.size()) - (json.contains("__metadata__") ? 1 : 0);
}

std::string pytorchBinConversionHint() {
  return "convert it to safetensors, e.g. in Python: import torch; from safetensors.torch import save_file; "
         "save_file(torch.load('pytorch_model.bin'), 'model.safetensors')";
}

std::map<std::string, std::vector<std::string>> readShardIndex(const fs::path& index_path) {
  const auto index = readJsonFile(index_path);
  const auto map = index.find("weight_map");
  if (map == index.end() || !map->is_object()) throw InputError(index_path.string(), "missing object 'weight_map'");
  if (map->empty()) throw InputError(index_path.string(), "weight_map is empty: the index names no tensor and no shard");
  std::map<std::string, std::vector<std::string>> by_file;
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string()) throw InputError(index_path.string(), "weight_map entry '" + tensor + "' is not a file name");
    const auto name = file.get<std::string>();
    if (name.empty() || name.find('/') != std::string::npos || name == "..")
      throw InputError(index_path.string(), "weight_map names a file outside the model directory: '" + name + "'");
    if (!fs::exists(index_path.parent_path() / name))
      throw InputError(index_path.string(), "shard '" + name + "' listed in weight_map does not exist");
    by_file[name].push_back(tensor);
  }
  return by_file;
}

bool Checkpoint::hasSafetensors(const fs::path& dir) {
  return fs::exists(dir / kIndexName) || fs::exists(dir / kSingleName);
}
bool Checkpoint::hasPytorchBin(const fs::path& dir) {
  return fs::exists(dir / "pytorch_model.bin") || fs::exists(dir / "pytorch_model.bin.index.json");
}

Checkpoint Checkpoint::open(const fs::path& dir) {
  std::vector<fs::path> files;
  std::map<std::string, TensorView> views;
  std::map<std::string, std::string> file_of;
  if (usesIndex(dir)) {
    for (const auto& [file, tensors] : readShardIndex(dir / kIndexName)) {
      const auto shard = SafetensorsFile::open(dir / file);
      for (const auto& t : tensors)
        if (!shard.find(t))
          throw InputError(shard.path().string(),
                           "tensor '" + t + "' listed in " + std::string(kIndexName) + " is not in this shard");
      addShard(views, file_of, shard);
      files.push_back(dir / file);
    }
  } else if (fs::exists(dir / kSingleName)) {
    addShard(views, file_of, SafetensorsFile::open(dir / kSingleName));
    files.push_back(dir / kSingleName);
  } else if (hasPytorchBin(dir)) {
    throw InputError((dir / "pytorch_model.bin").string(), "cannot read pytorch_model.bin here; " + pytorchBinConversionHint());
  } else {
    throw InputError(dir.string(), "no model weights found (expected model.safetensors, " + std::string(kIndexName) +
                                       " or pytorch_model.bin)");
  }
  return fromViews(dir, std::move(files), std::move(views), std::move(file_of));
}

Checkpoint Checkpoint::fromViews(const fs::path& dir, std::vector<fs::path> files, std::map<std::string, TensorView> views,
                                 std::map<std::string, std::string> file_of) {
  Checkpoint c;
  c.dir_ = dir;
  c.files_ = std::move(files);
  c.tensors_ = std::move(views);
  c.file_of_ = std::move(file_of);
  return c;
}

const TensorView* Checkpoint::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto& entry : tensors_) out.push_back(entry.first);
  return out;
}

std::string Checkpoint::fileOf(const std::string& name) const {
  const auto it = file_of_.find(name);
  return it == file_of_.end() ? dir_.string() : it->second;
}

}  // namespace posgeom::io
