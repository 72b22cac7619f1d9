#pragma once
// The weight tensors of one Hugging Face model directory, across its files.
#include <filesystem>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/io/safetensors.h"

namespace posgeom::io {

class Checkpoint {
 public:
  // Reads model.safetensors.index.json (sharded) or model.safetensors. A directory
  // holding only pytorch_model.bin gets an InputError that says how to convert it;
  // loaders that can read it build a Checkpoint with fromViews() instead.
  static Checkpoint open(const std::filesystem::path& dir);
  // Tensors read by other means, each view owning its memory; `files` are their sources.
  static Checkpoint fromViews(const std::filesystem::path& dir, std::vector<std::filesystem::path> files,
                              std::map<std::string, TensorView> views, std::map<std::string, std::string> file_of);
  static bool hasSafetensors(const std::filesystem::path& dir);
  static bool hasPytorchBin(const std::filesystem::path& dir);

  const TensorView* find(const std::string& name) const;
  // Every stored tensor's name, sorted.
  std::vector<std::string> names() const;
  // The file a tensor lives in, for error messages.
  std::string fileOf(const std::string& name) const;
  const std::vector<std::filesystem::path>& files() const { return files_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::vector<std::filesystem::path> files_;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> file_of_;
};

// A sharded checkpoint's index (model.safetensors.index.json or pytorch_model.bin.index.json):
// shard file name -> the tensors it holds. Shard names may not leave the directory.
std::map<std::string, std::vector<std::string>> readShardIndex(const std::filesystem::path& index_path);

// How many tensors a directory's safetensors checkpoint names: its index's weight map, or
// the keys of model.safetensors's header. Reads the header only (no data, no checks of
// it: a damaged file is the loader's to report); nullopt without a readable one.
std::optional<int64_t> countCheckpointTensors(const std::filesystem::path& dir);

// The conversion hint given wherever a pytorch_model.bin cannot be read.
std::string pytorchBinConversionHint();

}  // namespace posgeom::io
