#pragma once
// What an analysis run computes, as its state and summary.json record it: resume and
// merge compare these settings (the model and corpus by content, not by path). Torch-free.
#include <nlohmann/json.hpp>

#include "posgeom/pass/options.h"
#include "posgeom/pass/plan.h"
#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::pass {

// `tokenizer` null: the corpus is ids (generated or pretokenized).
nlohmann::json runSettings(const AnalyzeOptions& options, const PassPlan& plan, const tokenize::Tokenizer* tokenizer);

}  // namespace posgeom::pass
