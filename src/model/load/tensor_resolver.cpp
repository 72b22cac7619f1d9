#include "posgeom/model/load/tensor_resolver.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"

namespace posgeom::model {

std::vector<std::string> candidateNames(const std::string& canonical, const std::vector<std::string>& prefixes) {
  std::vector<std::string> bases{canonical};
  auto legacy = [&](const std::string& suffix, const std::string& old) {
    if (canonical.size() > suffix.size() && canonical.compare(canonical.size() - suffix.size(), suffix.size(), suffix) == 0)
      bases.push_back(canonical.substr(0, canonical.size() - suffix.size()) + old);
  };
  legacy("LayerNorm.weight", "LayerNorm.gamma");
  legacy("LayerNorm.bias", "LayerNorm.beta");
  std::vector<std::string> out;
  for (const auto& b : bases) {
    out.push_back(b);
    for (const auto& p : prefixes) out.push_back(p + b);
  }
  return out;
}

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A stored name with its first all-digit component (a block's index) as '*', and that index
// (-1 for a name outside the blocks).
std::pair<std::string, int64_t> blockPattern(const std::string& name) {
  size_t start = 0;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('.', start), name.size());
    const auto part = name.substr(start, end - start);
    if (!part.empty() && part.size() <= 9 && part.find_first_not_of("0123456789") == std::string::npos)
      return {name.substr(0, start) + "*" + name.substr(end), std::stoll(part)};
    start = end + 1;
  }
  return {name, -1};
}

std::string fileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::string firstNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  return names.size() > 3 ? out + ", ..." : out;
}

// An entry names a tensor (matched whole or after a prefix's dot), or with a trailing dot a
// module whose every tensor is unused (T5's "decoder.").
bool unusedByDesign(const std::string& name, const Architecture& arch) {
  for (const auto& s : arch.unused_by_design) {
    if (!s.empty() && s.back() == '.') {
      if (name.compare(0, s.size(), s) == 0 || name.find("." + s) != std::string::npos) return true;
    } else if (name == s || endsWith(name, "." + s)) {
      return true;
    }
  }
  return false;
}

// Whether a stored head tie_word_embeddings replaces holds the token embedding's own bytes
// (a checkpoint that stores its tied head: nothing to warn about).
bool sameAsEmbedding(const io::TensorView& head, const std::vector<ResolvedTensor>& used) {
  for (const auto& t : used)
    if (t.spec.use == TensorSpec::Use::kLookup)
      return t.view->dtype == head.dtype && t.view->shape == head.shape && t.view->nbytes == head.nbytes &&
             std::memcmp(t.view->data, head.data, head.nbytes) == 0;
  return false;
}

// Stored tensors no spec took. transformers warns about them and goes on ("Some weights of
// the model checkpoint were not used"), and so does this; but the blocks of a config that
// counts fewer layers than the checkpoint holds are a smaller model than the one stored,
// and are refused.
void checkUnusedTensors(const io::Checkpoint& checkpoint, const Architecture& arch, const ModelConfig& config,
                        const std::vector<ResolvedTensor>& used, const std::vector<std::string>& tied) {
  std::set<std::string> taken(tied.begin(), tied.end()), used_patterns;
  for (const auto& t : used) {
    taken.insert(t.stored_name);
    used_patterns.insert(blockPattern(t.stored_name).first);
  }
  std::vector<std::string> unused;
  int64_t last_block = -1;
  std::string block_file;
  for (const auto& name : checkpoint.names()) {
    if (taken.count(name)) continue;
    if (unusedByDesign(name, arch)) continue;
    const auto [pattern, block] = blockPattern(name);
    if (block >= config.num_layers && used_patterns.count(pattern) && block > last_block) {
      last_block = block;
      block_file = checkpoint.fileOf(name);
    }
    unused.push_back(name);
  }
  if (last_block >= 0)
    throw InputError(config.source.string(), arch.layers_key + " is " + std::to_string(config.num_layers) + " but " +
                                                 fileName(block_file) + " holds layers 0.." + std::to_string(last_block) +
                                                 ": the config would drop the layers after " +
                                                 std::to_string(config.num_layers - 1) + " (set it to " +
                                                 std::to_string(last_block + 1) + ")");
  for (const auto& name : tied)
    if (!sameAsEmbedding(*checkpoint.find(name), used))
      log::warn(fileName(checkpoint.fileOf(name)) + ": '" + name + "' is not used: tie_word_embeddings is true in " +
                fileName(config.source.string()) + ", so the LM head is the token embedding (as in transformers)");
  if (!unused.empty())
    log::warn(fileName(checkpoint.fileOf(unused.front())) + ": " + std::to_string(unused.size()) +
              (unused.size() == 1 ? " tensor is" : " tensors are") + " not used by the " + arch.family +
              " model and left out, as transformers does: " + firstNames(unused));
}

}  // namespace

std::vector<ResolvedTensor> resolveTensors(const io::Checkpoint& checkpoint, const Architecture& arch,
                                           const ModelConfig& config) {
  std::vector<ResolvedTensor> out;
  std::vector<std::string> tied;  // stored heads the embedding stands in for
  for (auto& spec : arch.tensors(config)) {
    const io::TensorView* view = nullptr;
    std::string found;
    for (const auto& name : candidateNames(spec.name, arch.name_prefixes)) {
      if ((view = checkpoint.find(name))) {
        found = name;
        break;
      }
    }
    if (spec.tied) {
      if (view) tied.push_back(found);
      continue;
    }
    if (!view) {
      if (spec.optional) continue;
      throw InputError(checkpoint.dir().string(), "missing tensor '" + spec.name + "' (a " + arch.family +
                                                      " checkpoint needs it; also looked for it with prefixes and legacy names)");
    }
    const std::string file = checkpoint.fileOf(found);
    if (view->shape != spec.shape)
      throw InputError(file, "tensor '" + found + "' has shape " + io::shapeToString(view->shape) + " but " +
                                 config.source.string() + " implies " + io::shapeToString(spec.shape));
    if (!io::isFloating(view->dtype))
      throw InputError(file, "tensor '" + found + "' is " + std::string(io::dtypeName(view->dtype)) +
                                 ", expected a floating-point dtype");
    out.push_back({std::move(spec), found, view});
  }
  checkUnusedTensors(checkpoint, arch, config, out, tied);
  return out;
}

}  // namespace posgeom::model
