#include "posgeom/train/run_directory.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/io/safetensors.h"

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

bool isRegularFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(path, ec));
}

// A train_config.json as train writes it: an object with the four tables of a config.
// Hugging Face's files share the other names (config.json, model.safetensors, ...).
bool isPosgeomTrainConfig(const fs::path& file) {
  if (!isRegularFile(file)) return false;
  std::ifstream in(file, std::ios::binary);
  const auto json = nlohmann::json::parse(in, nullptr, false);
  if (!json.is_object()) return false;
  for (const char* table : {"model", "data", "optim", "run"})
    if (!json.contains(table) || !json[table].is_object()) return false;
  return true;
}

bool isPosgeomCheckpoint(const fs::path& file) {
  if (!isRegularFile(file)) return false;
  try {
    return io::SafetensorsFile::open(file).metadata().count("posgeom_train") > 0;
  } catch (const std::exception&) {
    return false;  // not a safetensors file: not train's
  }
}

// A file only posgeom's train writes: its train_config.json, its checkpoint, or a
// step_<k>/ (which holds its own train_config.json). Without one, --out's config.json and
// model.safetensors are a model someone else wrote, and never train's to remove.
bool holdsPosgeomRun(const fs::path& dir) {
  if (isPosgeomTrainConfig(dir / "train_config.json") || isPosgeomCheckpoint(dir / "checkpoint.safetensors")) return true;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("step_", 0) == 0 && isTrainingRunEntry(e.path())) return true;
  return false;
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
  // A finished step_<k>/ is train's only with its train_config.json (written before the
  // rename); a .step_<k>.partial/ may have been killed before it.
  return !ec && (name[0] == '.' || isPosgeomTrainConfig(entry / "train_config.json"));
}

RunDirectory::RunDirectory(const fs::path& out, RunMode mode) : out_(out), mode_(mode) {
  if (out_.empty()) throw InputError(option::kOut, "is empty");
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
  if (!holdsPosgeomRun(out_))
    throw InputError(out_.string(), "holds a model that posgeom's train did not write (no train_config.json or checkpoint.safetensors "
                                    "of a posgeom training run); train replaces only its own runs (with --force), so move it "
                                    "or choose another --out");
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
