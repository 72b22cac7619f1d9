#pragma once
// The weight tensors of one Hugging Face model directory, across its safetensors shards.
#include <filesystem>
#include <string>
#include <vector>

#include "posgeom/io/safetensors.h"

namespace posgeom::io {

class Checkpoint {
 public:
  // Reads model.safetensors.index.json (sharded) or model.safetensors. A directory
  // holding only pytorch_model.bin gets an InputError that says how to convert it;
  // callers that can load it themselves check hasPytorchBin() first.
  static Checkpoint open(const std::filesystem::path& dir);
  static bool hasSafetensors(const std::filesystem::path& dir);
  static bool hasPytorchBin(const std::filesystem::path& dir);

  const TensorView* find(const std::string& name) const;
  // The file a tensor lives in, for error messages.
  std::string fileOf(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::vector<SafetensorsFile>& shards() const { return shards_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::vector<SafetensorsFile> shards_;
};

}  // namespace posgeom::io
