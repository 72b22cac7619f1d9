#include "posgeom/model/random_checkpoint.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <thread>

#include "posgeom/base/byte_size.h"
#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/base/process_memory.h"
#include "posgeom/base/parallel.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/model/architecture.h"
#include "posgeom/io/path_entry.h"

namespace posgeom::model {

// model.safetensors' mark of a checkpoint this wrote: --force replaces only those.
constexpr const char* kGenerator = "posgeom random-model";
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

// float32 values as stored: as they are, or rounded to bfloat16 (nearest, ties to even;
// the draws are finite).
void storeValues(const std::vector<float>& values, io::DType storage, std::byte* out) {
  if (storage == io::DType::kF32) {
    std::memcpy(out, values.data(), values.size() * sizeof(float));
    return;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &values[i], sizeof bits);
    const auto rounded = static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
    std::memcpy(out + 2 * i, &rounded, sizeof rounded);
  }
}

int64_t storedBytes(io::DType storage) { return storage == io::DType::kF32 ? 4 : 2; }

void fillNormal(std::byte* out, int64_t numel, uint64_t seed, float std_dev, io::DType storage) {
  const auto chunks = static_cast<std::size_t>((numel + kChunk - 1) / kChunk);
  parallelFor(chunks, std::max(1u, std::thread::hardware_concurrency()), [&](std::size_t c) {
    const int64_t first = static_cast<int64_t>(c) * kChunk, count = std::min(kChunk, numel - first);
    std::mt19937_64 rng(splitMix(seed + c));
    std::normal_distribution<float> normal(0.0f, std_dev);
    std::vector<float> values(static_cast<std::size_t>(count));
    for (auto& v : values) v = normal(rng);
    storeValues(values, storage, out + first * storedBytes(storage));
  });
}

// Layers beyond any model's (the deepest have a few hundred): the tensor list itself of a
// billion-layer request would take minutes to make.
constexpr int64_t kMaxLayers = 4096;

// Refuses, before anything is written, a checkpoint that the disk at `dir` or the memory
// could not hold (it used to end in bad_alloc with an empty directory left).
void checkItFits(const std::vector<TensorSpec>& tensors, const std::filesystem::path& dir, io::DType storage) {
  long double parameters = 0, largest = 0;  // long double: shapes whose product overflows int64
  std::string largest_name;
  for (const auto& t : tensors) {
    if (t.optional) continue;
    long double n = 1;
    for (const auto v : t.shape) n *= static_cast<long double>(v);
    parameters += n;
    if (n > largest) largest = n, largest_name = t.name;
  }
  const auto bytes = [](long double b) { return formatBytes(b > 9e18L ? INT64_MAX : static_cast<int64_t>(b)); };
  const long double file_bytes = static_cast<long double>(storedBytes(storage)) * parameters;
  auto existing = std::filesystem::absolute(dir);
  while (!std::filesystem::exists(existing) && existing.has_parent_path() && existing != existing.parent_path())
    existing = existing.parent_path();
  std::error_code ec;
  const auto space = std::filesystem::space(existing, ec);
  if (!ec && file_bytes > static_cast<long double>(space.available))
    throw InputError("random-model", "the checkpoint would take " + bytes(file_bytes) + " (" +
                                         std::to_string(static_cast<double>(parameters)) + " parameters) but " +
                                         existing.string() + " has " + bytes(static_cast<long double>(space.available)) +
                                         " free");
  // In memory at once: every value of a small checkpoint, else its largest tensor.
  const long double memory = parameters <= kOneStreamParameters ? file_bytes : 4 * largest;
  if (const auto available = availableHostMemory(); available && memory > static_cast<long double>(*available))
    throw InputError("random-model", "its largest tensor '" + largest_name + "' needs " + bytes(memory) +
                                         " of memory while it is written, and " + bytes(static_cast<long double>(*available)) +
                                         " is available");
}

}  // namespace

void checkRandomCheckpointOut(const std::filesystem::path& dir, bool force) {
  if (!io::entryExists(dir)) return;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw InputError(dir.string(), "exists and is not a directory");
  if (std::filesystem::is_empty(dir, ec)) return;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const auto name = e.path().filename().string();
    if (!e.is_regular_file() || (name != "config.json" && name != "model.safetensors"))
      throw InputError(dir.string(), "holds '" + name +
                                         "', which random-model does not write; --force replaces only a random model's "
                                         "config.json and model.safetensors, so move it or choose another --out");
  }
  if (!force) throw InputError(dir.string(), "holds a checkpoint; pass --force to replace it");
  // Names alone do not make it ours: a Hugging Face model may hold just these two files.
  const auto weights = dir / "model.safetensors";
  bool ours = false;
  try {
    const auto meta = io::SafetensorsFile::open(weights).metadata();
    const auto it = meta.find("generator");
    ours = it != meta.end() && it->second == kGenerator;
  } catch (const InputError&) {
  }
  if (!ours)
    throw InputError(dir.string(), "holds a model that random-model did not write (" + weights.filename().string() +
                                       " has no '" + kGenerator + "' mark); --force replaces only a random model");
}

void writeRandomCheckpoint(const RandomCheckpointSpec& spec, const std::filesystem::path& dir) {
  const auto& arch = architectureFor(spec.model_type, option::kArch);
  if (spec.layers > kMaxLayers)
    throw InputError(option::kLayers, std::to_string(spec.layers) + " is more than " + std::to_string(kMaxLayers));
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
  ModelConfig reread;
  try {
    reread = arch.parse_config(io::JsonConfig(config_json, "random-model " + spec.model_type + " config"));
  } catch (const InputError& e) {
    throw InputError("random-model", std::string("the sizes give a config the ") + arch.family + " reader refuses: " + e.what());
  }
  // A width the family's config cannot say (BLOOM's and MPT's MLPs are 4 x dim; GPT-2 has
  // no key/value heads of its own) would be written into tensors that its config reads back
  // otherwise: a checkpoint no command can load.
  if (spec.intermediate_size > 0 && reread.intermediate_size != config.intermediate_size)
    throw InputError(option::kMlp, std::to_string(spec.intermediate_size) + ": a " + arch.family + " config has no MLP width of its own (it reads back as " +
                                       std::to_string(reread.intermediate_size) + ")");
  if (spec.kv_heads > 0 && reread.num_kv_heads != config.num_kv_heads)
    throw InputError(option::kKvHeads, std::to_string(spec.kv_heads) + ": a " + arch.family + " config has no key/value heads of its own (it reads back as " +
                                           std::to_string(reread.num_kv_heads) + ")");

  const auto tensors = arch.tensors(config);
  if (spec.storage != io::DType::kF32 && spec.storage != io::DType::kBF16)
    throw InputError("random-model", "stores F32 or BF16, not " + std::string(io::dtypeName(spec.storage)));
  checkItFits(tensors, dir, spec.storage);

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir.string(), "cannot create directory: " + ec.message());

  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(spec.init_std));
  io::SafetensorsWriter writer;
  writer.setMetadata("format", "pt");
  writer.setMetadata("generator", kGenerator);
  int64_t parameters = 0;
  for (const auto& t : tensors) parameters += t.optional ? 0 : t.numel();
  const bool one_stream = parameters <= kOneStreamParameters;
  for (const auto& t : tensors) {
    if (t.optional) continue;
    if (!one_stream && t.init == TensorSpec::Init::kNormal) {
      const uint64_t seed = rng();  // drawn in the architecture's order, filled in the writer's
      writer.addDeferred(t.name, spec.storage, t.shape,
                         [numel = t.numel(), seed, std_dev = static_cast<float>(spec.init_std), storage = spec.storage](
                             std::byte* out) { fillNormal(out, numel, seed, std_dev, storage); });
      continue;
    }
    std::vector<float> values(static_cast<size_t>(t.numel()), t.init == TensorSpec::Init::kOnes ? 1.0f : 0.0f);
    if (one_stream && t.init == TensorSpec::Init::kNormal)
      for (auto& v : values) v = normal(rng);
    std::vector<std::byte> bytes(values.size() * static_cast<std::size_t>(storedBytes(spec.storage)));
    storeValues(values, spec.storage, bytes.data());
    writer.add(t.name, spec.storage, t.shape, bytes.data(), bytes.size());
  }
  writer.write(dir / "model.safetensors");
  io::writeTextFileAtomically(dir / "config.json", config_json.dump(2) + "\n");
}

}  // namespace posgeom::model
