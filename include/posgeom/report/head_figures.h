#pragma once
// The attention-head figures: the sqrt(ETC) and kernel_tv maps over layers x heads, every head's kernel
// profile (small multiples per layer) and the QK decomposition maps of chosen heads.
#include <string>
#include <vector>

#include "posgeom/heads/head_analysis.h"

namespace posgeom::report {

std::string etcMapFigure(const std::vector<heads::HeadReport>& heads);
// kernel_tv over blocks x heads: where the kernel explains the attention.
std::string kernelTvMapFigure(const std::vector<heads::HeadReport>& heads);
// --corpus repeated-random: induction and previous-token scores over blocks x heads, the
// named heads in the captions (fig-induction, fig-previous-token); empty otherwise.
std::string probeFigures(const std::vector<heads::HeadReport>& heads);
// Blocks x heads: the weight each head's attention puts on key 0 (fig-sink-share, the sink
// heads named in the caption); empty without sampled sequences.
std::string sinkShareFigure(const std::vector<heads::HeadReport>& heads);
// Blocks x heads: the weight each head's attention sends to its learned sink (gpt-oss);
// empty for models without learned sinks.
std::string learnedSinkShareFigure(const std::vector<heads::HeadReport>& heads);
// Per block, bands x heads: each rotary head's share of the kernel's (and the sampled
// attention's) squared logits in each band of RoPE's frequencies (fig-rope-bands); empty
// without RoPE heads.
std::string ropeBandsFigure(const std::vector<heads::HeadReport>& heads);
std::string kernelProfilesFigure(const std::vector<heads::HeadReport>& heads);
// Every head's kernel over queries x keys, as small heatmaps (the first 64 heads).
std::string kernelMapsFigure(const std::vector<heads::HeadReport>& heads);
// Empty when no head kept its maps.
std::string qkMapsFigure(const std::vector<heads::HeadReport>& heads);
// --qk-heads: W_QK in the standard and positional bases (fig-qk-basis).
std::string qkBasisFigure(const std::vector<heads::HeadReport>& heads);

}  // namespace posgeom::report
