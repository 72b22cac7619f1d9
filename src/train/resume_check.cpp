#include "posgeom/train/resume_check.h"

#include <ATen/Parallel.h>

#include <vector>

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/option_names.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/io/fingerprint.h"
#include "posgeom/io/safetensors.h"

namespace posgeom::train {
namespace fs = std::filesystem;

// Whole, its files in order: not analyze's sampled fingerprint, blind between its blocks.
std::string corpusDigest(const DataSpec& data) {
  if (data.task != "text") return "";
  std::vector<fs::path> files;
  for (const auto& f : corpus::corpusFiles(data.corpus.string())) files.emplace_back(f);
  return io::contentDigest(files);
}

std::string configDifference(const nlohmann::json& saved, const nlohmann::json& now) {
  const auto in = [](const nlohmann::json& j, const std::string& table, const std::string& key) {
    return j.contains(table) && j[table].is_object() && j[table].contains(key) ? j[table][key].dump() : std::string("none");
  };
  for (const auto* side : {&saved, &now})
    for (const auto& [table, keys] : side->items())
      for (const auto& [key, value] : keys.items())
        if (in(saved, table, key) != in(now, table, key))
          return table + "." + key + " (saved " + in(saved, table, key) + ", now " + in(now, table, key) + ")";
  return "";
}

// The checkpoint continues this run only with the same config (but for how long it runs
// and where it saves its series), the same corpus contents, a schedule not yet passed and
// the same threads (the loss curve is bit-for-bit only then). Returns its step.
// Checkpoints without a corpus_digest (before it; or with the sampled corpus_fingerprint
// of f26e8d4, which missed changes and held the file names) resume as they did: the
// corpus path is compared and its contents are not checked, with a warning.
int64_t checkResumable(const TrainConfig& c, const fs::path& path, const std::string& corpus_digest) {
  const auto f = io::SafetensorsFile::open(path);
  const auto it = f.metadata().find("posgeom_train");
  const auto meta = it == f.metadata().end() ? nlohmann::json() : nlohmann::json::parse(it->second, nullptr, false);
  if (!meta.is_object() || !meta.contains("config") || !meta["config"].is_object() || !meta.contains("step") ||
      !meta["step"].is_number_integer())
    throw InputError(path.string(), "is not a posgeom training checkpoint");
  auto saved = meta["config"], now = c.toJson();
  const int64_t saved_iterations = saved["optim"].value("iterations", int64_t{0});
  const bool digested = meta.contains("corpus_digest");
  for (auto* config : {&saved, &now}) {
    (*config)["optim"].erase("iterations");  // a run may be extended
    (*config)["run"].erase("save_every");    // and keep a series from any step on
    (*config)["run"].erase("out");           // "o", "./o" and "o/" are one directory
    if (digested) (*config)["data"].erase("corpus");  // known by its contents: a renamed copy is the same corpus
  }
  if (const auto difference = configDifference(saved, now); !difference.empty())
    throw InputError(path.string(), "was made with another training config: " + difference);
  if (!digested && c.data.task == "text")
    log::warn(path.string() + " was saved by an older posgeom, without a digest of its corpus's contents: the corpus is not checked");
  if (digested && meta["corpus_digest"] != corpus_digest)
    throw InputError(c.data.corpus.string(),
                     "is not the corpus the checkpoint's run trained on (its contents differ; " + path.string() + ")");
  const int64_t step = meta["step"].get<int64_t>();
  if (step > c.optim.iterations)
    throw InputError(path.string(), "is at step " + std::to_string(step) + ", past the " + std::to_string(c.optim.iterations) +
                                        " iterations asked: resume with --iterations " + std::to_string(step) +
                                        " or more (the run was scheduled for " + std::to_string(saved_iterations) + ")");
  if (meta.contains("threads") && meta["threads"] != at::get_num_threads())
    throw InputError(option::kThreads, "the checkpoint " + path.string() + " was saved by a run with " + meta["threads"].dump() +
                                      " threads and this one has " + std::to_string(at::get_num_threads()) +
                                      ": the same loss curve needs the same threads, so resume with --threads " + meta["threads"].dump());
  if (saved_iterations != c.optim.iterations && c.optim.decay != "constant")
    log::warn("the learning rate now decays over " + std::to_string(c.optim.iterations) + " steps, not the " +
              std::to_string(saved_iterations) + " the run was scheduled for: from step " + std::to_string(step) +
              " on it is not the curve of an uninterrupted run of either length");
  return step;
}

}  // namespace posgeom::train
