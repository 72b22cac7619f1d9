#pragma once
// The windows whose attention inputs a state sampled (block 0's), read again from the
// corpus: what the neurons stage runs through the model a second time. Torch-free.
#include <cstdint>
#include <vector>

#include "posgeom/anova/state_layers.h"
#include "posgeom/corpus/corpus_source.h"
#include "posgeom/corpus/window_sampler.h"
#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::pass {

// In the order of the samples; `windows` as the pass cut them (over all ranks). InputError
// naming the corpus when one cannot be read again (the corpus changed since the pass).
std::vector<std::vector<int32_t>> sampledWindowIds(const corpus::CorpusOptions& options, const tokenize::Tokenizer* tokenizer,
                                                   int64_t vocab_size, const corpus::WindowOptions& windows,
                                                   const anova::StateLayers& layers);

}  // namespace posgeom::pass
