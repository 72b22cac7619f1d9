#pragma once
// `posgeom bench`: how close the pass comes to the machine's limit. Measures, in one
// process, the matrix-multiply throughput, the bare forward pass, the pass `analyze`
// runs (with and without --heads), its fixed end stages, the tokenizer, and memory.
// Torch-free header.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/model/random_checkpoint.h"
#include "posgeom/jobs/bench_rounds.h"
#include "posgeom/pass/plan.h"
#include "posgeom/runtime/device.h"

namespace posgeom::jobs {

// A model shape the benchmark writes with random weights (Hugging Face layout).
struct BenchShape {
  std::string name;
  model::RandomCheckpointSpec spec;
};
// gpt2-small (12 x 768, 12 heads), llama-small (12 x 768, 12 query / 4 key heads, SwiGLU 2048),
// llama-1b (TinyLlama-1.1B: 22 x 2048, 32 / 4 heads, SwiGLU 5632), llama2-7b (Llama-2-7B:
// 32 x 4096, 32 heads, SwiGLU 11008; for a GPU) and llama2-7b-2l (its first two blocks, for
// the end stages at the paper's width on a CPU).
const std::vector<BenchShape>& benchShapes();

struct BenchJob {
  std::vector<std::string> shapes;                // names; empty: gpt2-small and llama-small (llama-1b on CUDA)
  std::vector<std::filesystem::path> models;      // existing checkpoints, measured instead of shapes
  int64_t seq_len = 512;
  int64_t batch_size = 0;                         // 0: chosen (enough tokens per product, within memory)
  int rounds = 5;                                 // timed rounds after one warm-up round (medians of them)
  runtime::DeviceSpec device;
  runtime::ComputeDtype dtype = runtime::ComputeDtype::kFloat32;
  std::filesystem::path work_dir;                 // generated checkpoints, kept and reused; empty: temporary
  std::filesystem::path out;                      // JSON; empty: none
  bool force = false;                             // replace an existing --out file
  bool layer_major = false;                       // also the layer-major pass against the resident one
  int64_t wave = 0;                               // its wave's windows; 0: four batches
};

struct BenchModelResult {
  std::string name;
  std::string model_type;
  int64_t layers = 0, hidden_size = 0, heads = 0, kv_heads = 0, intermediate_size = 0, vocab_size = 0;
  int64_t seq_len = 0, batch = 0;
  int64_t checkpoint_bytes = 0;
  double flops_per_token = 0;
  double forward_tokens_per_s = 0;
  double analyze_tokens_per_s = 0;        // the pass with analyze's accumulators
  double analyze_heads_tokens_per_s = 0;  // and with --heads' attention inputs
  std::optional<double> analyze_accumulator_share;        // CPU: PassRates' shares
  std::optional<double> analyze_heads_accumulator_share;
  double forward_gemm_share = 0;          // forward FLOP/s over the measured matrix throughput
  std::vector<RoundSeconds> rounds;       // each timed round's passes, the rates' source
  double metrics_end_stage_s = 0;         // once per run: the per-layer metrics
  double heads_end_stage_s = 0;           // once per run with --heads: kernels, QK split
  double metrics_per_layer_s = 0;         // the metrics end stage over the hidden states
  double heads_per_head_s = 0;            // the heads end stage over the heads
  double eigh_s = 0;                      // one d x d symmetric eigendecomposition by the metrics' solver, this run
  int64_t heads_analysed = 0;
  int64_t peak_rss_bytes = 0;             // while this model was measured
  std::optional<int64_t> device_memory_bytes;  // CUDA: the most in use while measured
  // With --layer-major: the wave's windows, its tokens/s and their ratio to the resident
  // pass's on the same batches (LayerMajorRates).
  int64_t wave_windows = 0;
  std::optional<double> layer_major_tokens_per_s, layer_major_vs_resident;
};

struct BenchResult {
  std::string device, dtype, blas, cpu;
  std::string compute;  // how the dtype runs: itself, or "bfloat16 emulated in float32" on a CPU without it
  int threads = 0;
  int64_t gemm_size = 0;
  double gemm_gflops = 0;
  double tokenizer_tokens_per_s = 0;  // corpus reading + tokenization + windows, as analyze does them
  std::string tokenizer_source;
  std::vector<BenchModelResult> models;
};

BenchResult runBench(const BenchJob& job);
// What bench measures is analyze's own pass: the options analyze would be given for the
// job's shape (seq-len, batch size, device, dtype; analyze's defaults otherwise), and the
// plans analyze makes of them for the model, without and with --heads.
pass::AnalyzeOptions benchOptions(const BenchJob& job, bool heads);
std::pair<pass::PassPlan, pass::PassPlan> benchPlans(const BenchJob& job, const std::filesystem::path& model_dir);
// The first model's numbers at the top level (the keys runs are compared by), all models under "models".
nlohmann::json benchJson(const BenchResult& result);
std::string benchTable(const BenchResult& result);

}  // namespace posgeom::jobs
