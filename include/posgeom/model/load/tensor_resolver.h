#pragma once
// Finds each tensor an architecture expects in a checkpoint, whatever prefix or legacy
// name it is stored under, and checks it against the config. Torch-free.
#include <string>
#include <vector>

#include "posgeom/io/checkpoint.h"
#include "posgeom/model/architecture.h"

namespace posgeom::model {

struct ResolvedTensor {
  TensorSpec spec;
  std::string stored_name;
  const io::TensorView* view;  // into the checkpoint's mapping
};

// Missing required tensors, wrong shapes and non-float dtypes throw InputError naming
// the file and the tensor. Absent optional tensors are left out.
std::vector<ResolvedTensor> resolveTensors(const io::Checkpoint& checkpoint, const Architecture& arch,
                                           const ModelConfig& config);

// The names under which a canonical name may be stored: itself, with each prefix,
// and with legacy LayerNorm gamma/beta spellings.
std::vector<std::string> candidateNames(const std::string& canonical, const std::vector<std::string>& prefixes);

}  // namespace posgeom::model
