// The TOML reader (io::parseToml) and the two configs read with it: a `batch` sweep
// (readSweep) and a `train` config (readTrainConfig), from the same bytes.
#include "fuzz_target.h"
#include "posgeom/io/toml_file.h"
#include "posgeom/jobs/batch_job.h"
#include "posgeom/train/train_config.h"

namespace posgeom::fuzz {

void tomlConfig(const uint8_t* data, std::size_t size) {
  const auto dir = scratchDir() / "toml";
  std::filesystem::create_directories(dir);
  const auto file = dir / "config.toml";
  writeBytes(file, data, size);
  const auto parsed = io::parseToml(std::string(reinterpret_cast<const char*>(data), size), file.string());
  if (!parsed.is_object()) __builtin_trap();  // a TOML document is a table
  // A seed is one kind of config or the other: refused only when neither reads it.
  bool accepted = false;
  std::string as_sweep;  // why readSweep refused it, said when readTrainConfig refuses it too
  try {
    const auto sweep = jobs::readSweep(file);
    for (const auto& run : sweep.runs)
      if (run.name.empty()) __builtin_trap();  // every run is named (its report directory)
    accepted = true;
  } catch (const InputError& e) {
    as_sweep = e.what();
  }
  try {
    (void)train::readTrainConfig(file);
    accepted = true;
  } catch (const InputError& e) {
    if (!accepted) throw InputError("", "not a sweep (" + as_sweep + ") nor a train config (" + e.what() + ")");
  }
}

}  // namespace posgeom::fuzz

POSGEOM_FUZZ_ENTRY(posgeom::fuzz::tomlConfig)
