#include "posgeom/model/random_checkpoint.h"

#include <cstring>
#include <random>
#include <thread>

#include "posgeom/base/error.h"
#include "posgeom/base/parallel.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/model/architecture.h"

namespace posgeom::model {
namespace {

// Up to this many parameters, one generator draws every value in order (the values small
// checkpoints of tests and demos have always had). Larger ones (a 7B shape: 6.7 billion
// values, minutes on one thread) draw each tensor from its own seed, in chunks of
// kChunk values seeded from it, filled on every core as the file is written: the same
// values whatever the core count, and one tensor in memory at a time.
constexpr int64_t kOneStreamParameters = int64_t{1} << 26;
constexpr int64_t kChunk = int64_t{1} << 22;

uint64_t splitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void fillNormal(std::byte* out, int64_t numel, uint64_t seed, float std_dev) {
  const auto chunks = static_cast<std::size_t>((numel + kChunk - 1) / kChunk);
  parallelFor(chunks, std::max(1u, std::thread::hardware_concurrency()), [&](std::size_t c) {
    const int64_t first = static_cast<int64_t>(c) * kChunk, count = std::min(kChunk, numel - first);
    std::mt19937_64 rng(splitMix(seed + c));
    std::normal_distribution<float> normal(0.0f, std_dev);
    std::vector<float> values(static_cast<std::size_t>(count));
    for (auto& v : values) v = normal(rng);
    std::memcpy(out + first * static_cast<int64_t>(sizeof(float)), values.data(), values.size() * sizeof(float));
  });
}

}  // namespace

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
  // The family's own reader must accept the config before anything is written: a shape it
  // refuses (an odd head width under RoPE) is bad input now, not a checkpoint that no
  // command can load.
  const auto config_json = arch.to_config_json(config);
  try {
    arch.parse_config(io::JsonConfig(config_json, "random-model " + spec.model_type + " config"));
  } catch (const InputError& e) {
    throw InputError("random-model", std::string("the sizes give a config the ") + arch.family + " reader refuses: " + e.what());
  }

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir.string(), "cannot create directory: " + ec.message());

  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(spec.init_std));
  io::SafetensorsWriter writer;
  writer.setMetadata("format", "pt");
  writer.setMetadata("generator", "posgeom random-model");
  int64_t parameters = 0;
  for (const auto& t : arch.tensors(config)) parameters += t.optional ? 0 : t.numel();
  const bool one_stream = parameters <= kOneStreamParameters;
  for (const auto& t : arch.tensors(config)) {
    if (t.optional) continue;
    if (!one_stream && t.init == TensorSpec::Init::kNormal) {
      const uint64_t seed = rng();  // drawn in the architecture's order, filled in the writer's
      writer.addDeferred(t.name, io::DType::kF32, t.shape, [numel = t.numel(), seed, std_dev = static_cast<float>(spec.init_std)](
                                                                std::byte* out) { fillNormal(out, numel, seed, std_dev); });
      continue;
    }
    std::vector<float> values(static_cast<size_t>(t.numel()), t.init == TensorSpec::Init::kOnes ? 1.0f : 0.0f);
    if (one_stream && t.init == TensorSpec::Init::kNormal)
      for (auto& v : values) v = normal(rng);
    writer.addF32(t.name, t.shape, values);
  }
  writer.write(dir / "model.safetensors");
  io::writeTextFileAtomically(dir / "config.json", config_json.dump(2) + "\n");
}

}  // namespace posgeom::model
