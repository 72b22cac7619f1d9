// Cost of the analysis over the bare forward pass, in one process on the same batches.
// Usage: posgeom_bench_analyze MODEL_DIR [SEQ_LEN=512] [BATCH=4] [REPEATS=3] [--no-second-moment]
// (tools/bench-analyze writes a GPT-2-small-shaped random model and runs this.)
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "posgeom/anova/accumulator.h"
#include "posgeom/model/loader.h"
#include "posgeom/model/runtime.h"
#include "posgeom/pipeline/heads_stage.h"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL_DIR [SEQ_LEN] [BATCH] [REPEATS]\n", argv[0]);
    return 2;
  }
  const int64_t seq_len = argc > 2 ? std::atoll(argv[2]) : 512;
  const int64_t batch = argc > 3 ? std::atoll(argv[3]) : 4;
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 3;
  const bool second_moment = !(argc > 5 && std::string(argv[5]) == "--no-second-moment");
  posgeom::model::configureThreads(0);
  const auto loaded = posgeom::model::loadModel(argv[1], posgeom::model::Numerics::parse("float32", "cpu"));
  const auto& config = loaded.model->config();
  const auto ids = at::randint(config.vocab_size, {batch, seq_len}, at::TensorOptions().dtype(at::kLong));

  posgeom::anova::AccumulatorOptions options;
  for (int64_t l = 0; l <= config.num_layers; ++l) options.layers.insert(l);
  options.second_moment = second_moment;
  posgeom::anova::Accumulator accumulator(options, seq_len, config.hidden_size, at::kCPU);
  auto head_options = options;
  head_options.attention_inputs = true;  // what --heads adds to the pass (the kernels run once, at the end)
  posgeom::anova::Accumulator head_accumulator(head_options, seq_len, config.hidden_size, at::kCPU);
  std::vector<int64_t> windows(static_cast<size_t>(batch));
  std::vector<std::string> labels(static_cast<size_t>(batch));

  auto run = [&](posgeom::anova::Accumulator* acc) {
    posgeom::model::ForwardRequest r;
    r.ids = ids;
    if (acc) {
      acc->beginBatch(windows, labels);
      r.observer = acc;
    }
    const auto t0 = Clock::now();
    loaded.model->forward(r);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  run(nullptr);  // warm-up
  run(&accumulator);
  run(&head_accumulator);
  double bare = 0, analysed = 0, with_heads = 0;
  for (int i = 0; i < repeats; ++i) {  // interleaved, so drifts in machine speed hit all three
    bare += run(nullptr);
    analysed += run(&accumulator);
    with_heads += run(&head_accumulator);
  }
  const double tokens = static_cast<double>(batch * seq_len * repeats);
  // The heads' end stage (kernels, QK split, sparsity) runs once per run on the kept samples.
  posgeom::anova::AnalysisState state;
  state.layers = head_accumulator.statistics();
  const auto t_heads = Clock::now();
  const auto heads = posgeom::pipeline::analyzeHeads(*loaded.model, state, {}, true);
  const double heads_s = std::chrono::duration<double>(Clock::now() - t_heads).count();
  const double window_s = bare / static_cast<double>(batch * repeats);
  std::printf("model: %lld layers, d=%lld, T=%lld, batch=%lld, threads=%d\n", static_cast<long long>(config.num_layers),
              static_cast<long long>(config.hidden_size), static_cast<long long>(seq_len), static_cast<long long>(batch),
              at::get_num_threads());
  std::printf("forward_tokens_per_s %.1f\nanalyze_tokens_per_s %.1f\nanalyze_heads_tokens_per_s %.1f\n", tokens / bare,
              tokens / analysed, tokens / with_heads);
  std::printf("analysis_overhead %.1f%%\nanalysis_heads_overhead %.1f%%\n", 100.0 * (analysed / bare - 1.0),
              100.0 * (with_heads / bare - 1.0));
  std::printf("heads_end_stage_s %.2f (%zu heads, %lld sampled sequences; as long as %.1f windows' bare forward)\n", heads_s,
              heads.size(), static_cast<long long>(heads.empty() ? 0 : heads.front().samples), heads_s / window_s);
  return 0;
}
