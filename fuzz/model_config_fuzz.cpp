// config.json of every architecture: parsing, validation, and the tensor list (shapes
// from the config's numbers) that loading and the memory estimate rely on.
#include "fuzz_target.h"
#include "posgeom/model/architecture.h"

namespace posgeom::fuzz {

void modelConfig(const uint8_t* data, std::size_t size) {
  const auto dir = scratchDir() / "model";
  std::filesystem::create_directories(dir);
  writeBytes(dir / "config.json", data, size);
  const auto config = model::loadModelConfig(dir);
  int64_t parameters = 0;  // what the memory estimate computes from them
  for (const auto& spec : model::architectureFor(config.model_type, "").tensors(config)) {
    for (int64_t v : spec.shape)
      if (v <= 0) __builtin_trap();  // a validated config gives positive shapes
    parameters += spec.numel();
  }
  (void)parameters;
}

}  // namespace posgeom::fuzz

POSGEOM_FUZZ_ENTRY(posgeom::fuzz::modelConfig)
