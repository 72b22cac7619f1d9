#pragma once
// What `analyze` accumulates in its pass, shared with `bench` so that the benchmark
// measures the pass that analyze runs. Private to the pipeline.
#include "posgeom/anova/accumulator.h"
#include "posgeom/pipeline/analyze_job.h"

namespace posgeom::pipeline {

// Throws InputError for a --layer selection outside 0..hidden_states-1.
anova::AccumulatorOptions accumulatorOptions(const AnalyzeJob& job, int64_t hidden_states);

}  // namespace posgeom::pipeline
