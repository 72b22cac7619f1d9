#pragma once
// Everything `--heads` reports for one block's attention heads: the positional kernel
// (from sampled queries by default, or the mean embedding), its ETC, window and class,
// the contextual flag, the QK decomposition and the actual attention's sparsity. Eigen only.
#include <Eigen/Dense>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "posgeom/heads/head_kind.h"
#include "posgeom/heads/positional_kernel.h"
#include "posgeom/heads/qk_positional_basis.h"
#include "posgeom/heads/rope_bands.h"
#include "posgeom/metrics/screenot.h"

namespace posgeom::heads {

enum class QueryMode { kSampled, kMeanEmbedding };
// "sampled" or "mean"; throws InputError otherwise.
QueryMode parseQueryMode(const std::string& name);
std::string queryModeName(QueryMode mode);

struct HeadOptions {
  QueryMode query = QueryMode::kSampled;
  int64_t kernel_skip = 5;
  ClassThresholds thresholds;
  double contextual_cv = 0.2;  // broad (not local) and denominator CV below this: contextual
  int subspace_k = 20;         // ScreeNOT bound for the positional subspace of W_Q W_K^T
  metrics::ScreeNotStrategy subspace_strategy = metrics::ScreeNotStrategy::kImpute;
  // (block, head) pairs asked for with --qk-heads: they keep their QK maps and get W_QK in
  // the positional basis.
  std::vector<std::pair<int64_t, int64_t>> qk_maps;
  // Keep every head's whole [T, T] kernels (--save-kernels): 8 T² bytes a head in memory
  // until the report writes them.
  bool keep_kernels = false;
  bool keep_first_block_kernels = false;  // the same for block 0 only (--neurons reads them)
  // > 0: the windows are three copies of a random stretch of this many ids (--corpus
  // repeated-random), and every head gets its induction and previous-token scores.
  int64_t repeat_period = 0;
};

// A head is named an induction or previous-token head when its score is above this: most
// of each query's weight on the one key the pattern names.
inline constexpr double kPatternHeadAbove = 0.4;

// "B.H,B.H": heads by block (0-based: block b reads hidden.b and writes hidden.b+1) and
// head index, as the field names them (the blog's "Head 5.1", TransformerLens' blocks.5).
std::vector<std::pair<int64_t, int64_t>> parseHeadList(const std::string& spec);

// One block's heads: the mean attention input per position, the sampled sequences' inputs,
// and each head's maps and kernel settings (causal, ALiBi slope, RoPE).
struct BlockHeads {
  int64_t block = 0;                 // 0-based: reads hidden.block, writes hidden.block+1
  Eigen::MatrixXd means;             // [T, d]
  Eigen::MatrixXd samples;           // [S * T, d]
  std::vector<HeadMaps> maps;        // per head
  std::vector<KernelSettings> kernel;  // per head; skip comes from HeadOptions
};

inline constexpr Eigen::Index kThumbSide = 48;

struct HeadReport {
  int64_t block = 0;  // 0-based, as BlockHeads::block
  int64_t head = 0;
  double etc = 0;        // ETC of the kernel at the last position
  int64_t keys = 0;      // keys in the last position's softmax
  int64_t window90 = 0;  // of the kernel at the last position
  HeadKind kind = HeadKind::kUniform;
  double etc_mean_query = 0;  // the same ETC with the mean embedding as query
  double denominator_cv = 0;  // NaN with fewer than two samples
  bool contextual = false;
  std::array<double, 4> qk_shares{};  // pos-pos, pos-cvec, cvec-pos, cvec-cvec
  double qk_energy_pos = 0;           // share of W_Q W_K^T inside the positional subspace
  int64_t qk_rank = 0;                // that subspace's dimension
  double attention_keys90 = 0;
  double attention_entropy = 0;
  // How well the kernel explains the attention: the mean over queries of the total-variation
  // distance between the sampled sequences' attention (averaged over them) and the kernel.
  double kernel_tv = 0;
  double equivariance_tv = 0;      // heads::translationEquivarianceTv of the kernel
  double kernel_query_spread = 0;  // SampledAttention::kernel_spread
  // With HeadOptions::repeat_period = L: the mean attention weight (over the sampled
  // sequences, over the kernel's keys) on the token after the previous copy of the query's
  // token, key n - L + 1, over the queries n >= L that see it (induction), and on key
  // n - 1 over the queries that see it (previous token). NaN otherwise.
  double induction_score = std::numeric_limits<double>::quiet_NaN();
  double previous_token_score = std::numeric_limits<double>::quiet_NaN();
  // Attention sinks (SampledAttention's, over the whole softmax, the skip's keys in it): the
  // sampled sequences' mean weight on key 0, on the first `skip` keys (NaN for a skip of 0),
  // and on the query's own key. NaN without samples.
  double sink_share = std::numeric_limits<double>::quiet_NaN();
  double first_keys_share = std::numeric_limits<double>::quiet_NaN();
  double self_share = std::numeric_limits<double>::quiet_NaN();
  // With a learned sink (gpt-oss): the weight its logit takes from the keys, averaged over the
  // queries from the skip on, in the sampled sequences' attention and in the kernel. NaN otherwise.
  double learned_sink_share = std::numeric_limits<double>::quiet_NaN();
  double kernel_learned_sink_share = std::numeric_limits<double>::quiet_NaN();
  std::optional<RopeBandReport> rope_bands;  // RoPE heads: where in the frequencies q . k lies
  int64_t samples = 0;
  Eigen::VectorXd etc_curve;  // ETC(n) for every position n
  Eigen::VectorXd profile;    // the kernel's last row K_{T-1}(i)
  Eigen::MatrixXd kernel_thumb;  // the kernel [T, T] averaged down to at most kThumbSide per side, for the report
  // With HeadOptions::keep_kernels: the kernel over every query (the default one) and the
  // mean-query one, [T, T], zero where a key is not seen.
  Eigen::MatrixXf kernel, mean_query_kernel;
  std::vector<Eigen::MatrixXd> qk_maps;  // for heads in HeadOptions::qk_maps (see SampledAttention::maps)
  std::optional<QkBasisReport> qk_basis;  // for the same heads
};

// A head whose sink_share is above this sends more than half its attention to key 0 over the
// sampled windows: a sink head (StreamingLLM's "attention sink"; summary.json names them per block).
inline constexpr double kSinkHeadAbove = 0.5;

// The mean of attention(n, n - lag) over the queries n >= first_query whose softmax holds
// key n - lag (from settings.skip, inside any window); NaN when none does.
double lagScore(const Eigen::MatrixXd& attention, Eigen::Index lag, Eigen::Index first_query, const KernelSettings& settings);

// Heads run in parallel on up to `threads` threads (0: the hardware's).
std::vector<HeadReport> analyzeBlock(const BlockHeads& block, const HeadOptions& options, unsigned threads = 0);

}  // namespace posgeom::heads
