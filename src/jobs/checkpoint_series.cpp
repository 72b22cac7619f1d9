#include "posgeom/jobs/checkpoint_series.h"

#include <spdlog/spdlog.h>

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "posgeom/base/error.h"
#include "posgeom/jobs/sweep_config.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;

std::optional<int64_t> checkpointStep(const std::string& name) {
  std::size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  if (digits == name.size() || digits == 0 || (name[digits - 1] != '_' && name[digits - 1] != '-') || name.size() - digits > 18)
    return std::nullopt;
  return std::stoll(name.substr(digits));
}

bool isCheckpointPattern(const std::string& model) { return model.find_first_of("*?[") != std::string::npos; }

std::vector<fs::path> matchingCheckpoints(const fs::path& pattern, const std::string& where) {
  if (isCheckpointPattern(pattern.parent_path().string()))
    throw InputError(where, "only the last component of a model pattern may hold * or ?");
  std::vector<fs::path> out;
  std::vector<std::string> files;  // matches that cannot be checkpoints
  std::error_code ec;
  const fs::path dir = pattern.has_parent_path() ? pattern.parent_path() : fs::path(".");
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (fnmatch(pattern.filename().c_str(), it->path().filename().c_str(), FNM_PERIOD) == 0) {
      if (it->is_directory()) out.push_back(it->path());
      else files.push_back(it->path().filename().string());
    }
  std::sort(files.begin(), files.end());
  if (!files.empty()) spdlog::warn("{}: left out {}: they match the pattern but are not checkpoint directories", where, joined(files));
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    const auto sa = checkpointStep(a.filename().string()), sb = checkpointStep(b.filename().string());
    if (sa.has_value() != sb.has_value()) return sa.has_value();
    return sa && *sa != *sb ? *sa < *sb : a.filename() < b.filename();
  });
  return out;
}

void requireOneCheckpointAStep(const std::vector<fs::path>& checkpoints, const std::string& where) {
  std::map<int64_t, fs::path> by_step;
  for (const auto& dir : checkpoints)
    if (const auto step = checkpointStep(dir.filename().string()))
      if (const auto [it, fresh] = by_step.emplace(*step, dir); !fresh)
        throw InputError(where, it->second.string() + " and " + dir.string() + " are both step " + std::to_string(*step) +
                                    ": a series holds one checkpoint a step");
}

}  // namespace posgeom::jobs
