#include "posgeom/model/random_checkpoint.h"

#include <random>

#include "posgeom/base/error.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/model/architecture.h"

namespace posgeom::model {

void writeRandomCheckpoint(const RandomCheckpointSpec& spec, const std::filesystem::path& dir) {
  const auto& arch = architectureFor(spec.model_type, "--arch");
  if (spec.layers <= 0 || spec.hidden_size <= 0 || spec.heads <= 0 || spec.vocab_size <= 0 || spec.max_positions <= 0)
    throw InputError("random-model", "sizes must be positive");
  if (spec.hidden_size % spec.heads != 0) throw InputError("random-model", "hidden size must be divisible by heads");
  ModelConfig config;
  config.model_type = spec.model_type;
  config.vocab_size = spec.vocab_size;
  config.hidden_size = spec.hidden_size;
  config.num_layers = spec.layers;
  config.num_heads = spec.heads;
  config.num_kv_heads = spec.kv_heads > 0 ? spec.kv_heads : spec.heads;
  config.intermediate_size = spec.intermediate_size > 0 ? spec.intermediate_size : 4 * spec.hidden_size;
  config.max_positions = spec.max_positions;
  config.type_vocab_size = 2;
  config.norm_eps = 1e-5;
  config.activation = spec.model_type == "llama" ? "silu" : (spec.model_type == "bert" ? "gelu" : "gelu_new");
  config.tie_word_embeddings = spec.model_type != "llama";
  if (config.num_heads % config.num_kv_heads != 0) throw InputError("random-model", "heads must be a multiple of kv heads");

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
