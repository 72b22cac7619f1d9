#include "posgeom/model/random_checkpoint.h"

#include <random>

#include "posgeom/base/error.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/model/architecture.h"

namespace posgeom::model {

void writeRandomCheckpoint(const RandomCheckpointSpec& spec, const std::filesystem::path& dir) {
  const auto& arch = architectureFor(spec.model_type, "--arch");
  ModelShape shape;
  shape.layers = spec.layers;
  shape.hidden_size = spec.hidden_size;
  shape.heads = spec.heads;
  shape.kv_heads = spec.kv_heads;
  shape.intermediate_size = spec.intermediate_size;
  shape.vocab_size = spec.vocab_size;
  shape.max_positions = spec.max_positions;
  ModelConfig config = arch.config_for_shape(shape);
  config.model_type = spec.model_type;

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir.string(), "cannot create directory: " + ec.message());

  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(spec.init_std));
  io::SafetensorsWriter writer;
  writer.setMetadata("format", "pt");
  writer.setMetadata("generator", "posgeom random-model");
  for (const auto& t : arch.tensors(config)) {
    if (t.optional) continue;
    std::vector<float> values(static_cast<size_t>(t.numel()), t.init == TensorSpec::Init::kOnes ? 1.0f : 0.0f);
    if (t.init == TensorSpec::Init::kNormal)
      for (auto& v : values) v = normal(rng);
    writer.addF32(t.name, t.shape, values);
  }
  writer.write(dir / "model.safetensors");
  io::writeTextFileAtomically(dir / "config.json", arch.to_config_json(config).dump(2) + "\n");
}

}  // namespace posgeom::model
