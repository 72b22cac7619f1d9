#include "posgeom/pass/sampled_windows.h"

#include <algorithm>
#include <map>

#include "posgeom/base/error.h"

namespace posgeom::pass {

std::vector<std::vector<int32_t>> sampledWindowIds(const corpus::CorpusOptions& options, const tokenize::Tokenizer* tokenizer,
                                                   int64_t vocab_size, const corpus::WindowOptions& windows,
                                                   const anova::StateLayers& layers) {
  std::vector<int64_t> wanted;
  if (const auto found = layers.find(1)) wanted = layers.at(*found)->attention_sample_windows;
  std::map<int64_t, std::vector<int32_t>> found;
  const int64_t last = wanted.empty() ? -1 : *std::max_element(wanted.begin(), wanted.end());
  auto stream = corpus::openCorpus(options, tokenizer, vocab_size);
  corpus::WindowSampler sampler(*stream, windows);
  while (static_cast<int64_t>(found.size()) < static_cast<int64_t>(wanted.size())) {
    auto window = sampler.next();
    if (!window || window->index > last) break;
    if (std::find(wanted.begin(), wanted.end(), window->index) != wanted.end()) found[window->index] = std::move(window->ids);
  }
  if (found.size() != wanted.size())
    throw InputError(options.path, "changed since the pass: its sampled windows could not be read again (--neurons)");
  std::vector<std::vector<int32_t>> ids;
  for (const auto w : wanted) ids.push_back(found.at(w));
  return ids;
}

}  // namespace posgeom::pass
