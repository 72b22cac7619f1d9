#pragma once
// Opens a model directory's weights whatever their format: safetensors (memory-mapped),
// else pytorch_model.bin (single or sharded) through LibTorch's unpickler. Torch-free header.
#include <filesystem>

#include "posgeom/io/checkpoint.h"

namespace posgeom::model {

io::Checkpoint openCheckpoint(const std::filesystem::path& dir);

// Reads one torch.save (zip) file of a state dict. A file LibTorch cannot read
// (the pre-1.6 legacy format, a pickle of other objects) is an InputError with the
// conversion hint.
io::Checkpoint loadPytorchBin(const std::filesystem::path& dir);

}  // namespace posgeom::model
