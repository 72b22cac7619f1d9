#pragma once
// `posgeom baseline sinusoidal`: the same positional metrics for the fixed sinusoidal
// embedding of "Attention is all you need" (dim D, T positions), the paper's point of
// comparison. PE(t, 2i) = sin(t / 10000^(2i/D)), PE(t, 2i+1) = cos(...); P is PE minus its
// mean over positions. Torch-free.
#include <cstdint>
#include <filesystem>

#include "posgeom/pass/options.h"

namespace posgeom::jobs {

void runSinusoidalBaseline(int64_t dim, int64_t seq_len, const std::filesystem::path& out, const pass::ReportOptions& report,
                           bool force = false);

}  // namespace posgeom::jobs
