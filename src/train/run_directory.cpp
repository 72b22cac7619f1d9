#include "posgeom/train/run_directory.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "posgeom/base/error.h"

namespace posgeom::train {
namespace fs = std::filesystem;
namespace {

constexpr std::array<const char*, 7> kRunFiles = {"config.json",      "model.safetensors", "tokenizer.json", "train_config.json",
                                                  "train_log.csv",    "training.json",     "checkpoint.safetensors"};
// What a step_<k>/ holds: the model and what it was trained with.
constexpr std::array<const char*, 5> kStepFiles = {"config.json", "model.safetensors", "tokenizer.json", "train_config.json",
                                                   "training.json"};

bool digits(const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }); }

// `name`, or `name`.tmp.<pid> (io::writeFileAtomically's temporary file), for one of `files`.
template <std::size_t N>
bool oneOf(const std::string& name, const std::array<const char*, N>& files) {
  for (const char* f : files) {
    const std::string file = f;
    if (name == file) return true;
    if (name.rfind(file + ".tmp.", 0) == 0 && digits(name.substr(file.size() + 5))) return true;
  }
  return false;
}

bool isStepDirectoryName(const std::string& name) {
  if (name.rfind("step_", 0) == 0) return digits(name.substr(5));
  const std::string suffix = ".partial";
  return name.rfind(".step_", 0) == 0 && name.size() > 6 + suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
         digits(name.substr(6, name.size() - 6 - suffix.size()));
}

// The first entry of `dir` that is not a training run's ("" when none).
std::string foreignEntry(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (!isTrainingRunEntry(e.path())) return e.path().filename().string();
  return "";
}

void removeRunEntries(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (isTrainingRunEntry(e.path())) fs::remove_all(e.path(), ec);
}

}  // namespace

bool isTrainingRunEntry(const fs::path& entry) {
  const auto name = entry.filename().string();
  std::error_code ec;
  const auto status = fs::symlink_status(entry, ec);
  if (fs::is_regular_file(status)) return oneOf(name, kRunFiles);
  if (!fs::is_directory(status) || !isStepDirectoryName(name)) return false;
  for (const auto& e : fs::directory_iterator(entry, ec))
    if (!e.is_regular_file() || e.is_symlink() || !oneOf(e.path().filename().string(), kStepFiles)) return false;
  return !ec;
}

RunDirectory::RunDirectory(const fs::path& out, RunMode mode) : out_(out), mode_(mode) {
  if (out_.empty()) throw InputError("--out", "is empty");
  lock_ = std::make_unique<io::PathLock>(out_);
  std::error_code ec;
  if (fs::exists(out_, ec) && !fs::is_directory(out_, ec)) throw InputError(out_.string(), "exists and is not a directory");
  if (mode_ == RunMode::kResume) {
    if (!fs::exists(checkpoint(), ec))
      throw InputError(checkpoint().string(), "no checkpoint to resume from (without --resume, train starts the run)");
    return;
  }
  if (!fs::is_directory(out_, ec) || fs::is_empty(out_, ec)) return;
  if (const auto entry = foreignEntry(out_); !entry.empty())
    throw InputError(out_.string(), "holds '" + entry +
                                        "', which is not a posgeom training run's file; train replaces only a training run "
                                        "(with --force), so move it or choose another --out");
  if (mode_ == RunMode::kNew)
    throw InputError(out_.string(), fs::exists(checkpoint(), ec)
                                        ? "holds a training run; pass --force to replace it, or --resume to continue it"
                                        : "holds a training run; pass --force to replace it");
}

void RunDirectory::prepare() {
  std::error_code ec;
  if (mode_ == RunMode::kForce) removeRunEntries(out_);
  if (!fs::exists(out_, ec)) {
    fs::create_directories(out_, ec);
    if (ec) throw InputError(out_.string(), "cannot create the output directory: " + ec.message());
    created_ = true;
  }
  prepared_ = true;
}

RunDirectory::~RunDirectory() {
  // Failed before its first checkpoint: nothing of it is worth keeping (a resumed run's
  // directory holds the checkpoint it started from, and stays).
  if (prepared_ && !keep_ && mode_ != RunMode::kResume) {
    removeRunEntries(out_);
    std::error_code ec;
    if (created_ && fs::is_empty(out_, ec)) fs::remove(out_, ec);
  }
}

}  // namespace posgeom::train
