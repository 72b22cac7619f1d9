#include "posgeom/model/load/checkpoint_source.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>

#include "posgeom/base/error.h"

namespace posgeom::model {
namespace fs = std::filesystem;
namespace {

std::optional<io::DType> dtypeOf(at::ScalarType t) {
  switch (t) {
    case at::kDouble: return io::DType::kF64;
    case at::kFloat: return io::DType::kF32;
    case at::kHalf: return io::DType::kF16;
    case at::kBFloat16: return io::DType::kBF16;
    case at::kLong: return io::DType::kI64;
    case at::kInt: return io::DType::kI32;
    case at::kByte: return io::DType::kU8;
    case at::kBool: return io::DType::kBool;
    default: return std::nullopt;
  }
}

void readStateDict(const fs::path& path, std::map<std::string, io::TensorView>& views,
                   std::map<std::string, std::string>& file_of) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "cannot open");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::jit::pickle_load(bytes);
  } catch (const std::exception&) {
    throw InputError(path.string(), "LibTorch cannot read this file; " + io::pytorchBinConversionHint());
  }
  if (!value.isGenericDict()) throw InputError(path.string(), "not a state dict; " + io::pytorchBinConversionHint());
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString() || !entry.value().isTensor()) continue;  // e.g. metadata
    const std::string name = entry.key().toStringRef();
    const auto tensor = std::make_shared<at::Tensor>(entry.value().toTensor().contiguous());
    const auto dtype = dtypeOf(tensor->scalar_type());
    if (!dtype) throw InputError(path.string(), "tensor '" + name + "' has an unsupported dtype");
    io::TensorView view;
    view.name = name;
    view.dtype = *dtype;
    view.shape = tensor->sizes().vec();
    view.data = static_cast<const std::byte*>(tensor->data_ptr());
    view.nbytes = tensor->nbytes();
    view.owner = tensor;
    if (!views.emplace(name, std::move(view)).second)
      throw InputError(path.string(), "tensor '" + name + "' appears in more than one shard");
    file_of[name] = path.string();
  }
}

}  // namespace

io::Checkpoint loadPytorchBin(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::exists(dir / "pytorch_model.bin.index.json")) {
    for (const auto& [file, tensors] : io::readShardIndex(dir / "pytorch_model.bin.index.json")) files.push_back(dir / file);
  } else {
    files.push_back(dir / "pytorch_model.bin");
  }
  std::map<std::string, io::TensorView> views;
  std::map<std::string, std::string> file_of;
  for (const auto& f : files) readStateDict(f, views, file_of);
  return io::Checkpoint::fromViews(dir, files, std::move(views), std::move(file_of));
}

io::Checkpoint openCheckpoint(const fs::path& dir) {
  if (!io::Checkpoint::hasSafetensors(dir) && io::Checkpoint::hasPytorchBin(dir)) return loadPytorchBin(dir);
  return io::Checkpoint::open(dir);
}

}  // namespace posgeom::model
