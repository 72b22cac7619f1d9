#pragma once
// train's --out holds one training run and nothing else. A new run needs it absent or
// empty; --force replaces a directory that holds only a training run's own files, never
// one with anything else in it (an analyze report, the user's files), nor one without a
// file only train writes (a Hugging Face model has config.json and model.safetensors too:
// a posgeom train_config.json or checkpoint, or a step_<k>/ with its own); --resume continues
// the run whose checkpoint is in it. An io::PathLock is held beside it for the run's
// lifetime, so a second run on the same --out refuses. A run that fails before its first
// checkpoint takes back what it wrote, and --out itself if it created it. Torch-free.
#include <filesystem>
#include <memory>

#include "posgeom/io/path_lock.h"

namespace posgeom::train {

enum class RunMode {
  kNew,     // --out absent or empty
  kForce,   // a training run in --out is replaced
  kResume,  // --out holds the checkpoint to continue
};

class RunDirectory {
 public:
  // Takes the lock and checks the policy; writes nothing. InputError naming --out.
  RunDirectory(const std::filesystem::path& out, RunMode mode);
  ~RunDirectory();
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::filesystem::path& out() const { return out_; }
  std::filesystem::path checkpoint() const { return out_ / "checkpoint.safetensors"; }
  // When the run is about to write: the old run's files are removed (kForce) and --out
  // is created.
  void prepare();
  // A checkpoint is written: from now on a failure leaves --out as it is, for --resume.
  void keep() { keep_ = true; }

 private:
  std::filesystem::path out_;
  RunMode mode_;
  std::unique_ptr<io::PathLock> lock_;
  bool created_ = false, prepared_ = false, keep_ = false;
};

// An entry of --out that a training run writes: config.json, model.safetensors,
// tokenizer.json, train_config.json, train_log.csv, training.json, checkpoint.safetensors
// (and their *.tmp.<pid> left by a killed run), step_<k>/ holding only a model's files
// and its posgeom train_config.json, and .step_<k>.partial/ holding only a model's files.
bool isTrainingRunEntry(const std::filesystem::path& entry);

}  // namespace posgeom::train
