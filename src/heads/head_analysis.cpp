#include "posgeom/heads/head_analysis.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <thread>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/base/parallel.h"
#include "posgeom/heads/qk_subspace.h"
#include "posgeom/metrics/lapack.h"
#include "posgeom/heads/sampled_attention.h"
#include "head_math.h"

namespace posgeom::heads {

QueryMode parseQueryMode(const std::string& name) {
  if (name == "sampled") return QueryMode::kSampled;
  if (name == "mean") return QueryMode::kMeanEmbedding;
  throw InputError(option::kKernelQuery, "'" + name + "' (use sampled or mean)");
}

std::string queryModeName(QueryMode mode) { return mode == QueryMode::kSampled ? "sampled" : "mean"; }

std::vector<std::pair<int64_t, int64_t>> parseHeadList(const std::string& spec) {
  std::vector<std::pair<int64_t, int64_t>> out;
  std::size_t start = 0;
  while (start < spec.size()) {
    const auto comma = spec.find(',', start);
    const std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? spec.size() : comma + 1;
    const auto dot = item.find('.');
    char* end = nullptr;
    const long block = dot == std::string::npos ? -1 : std::strtol(item.c_str(), &end, 10);
    const bool block_ok = dot != std::string::npos && end == item.c_str() + dot && dot > 0;
    const long head = block_ok ? std::strtol(item.c_str() + dot + 1, &end, 10) : -1;
    if (!block_ok || *end != '\0' || dot + 1 == item.size() || block < 0 || head < 0)
      throw InputError(option::kQkHeads, "'" + item + "' is not BLOCK.HEAD (0-based block, e.g. 3.0)");
    out.emplace_back(block, head);
  }
  return out;
}

namespace {

// Every head's W_Q and W_K applied to the block's mean inputs and to its samples' cvec in
// one product per side: the heads' own [T, d] x [d, dh] products run well under peak, and
// key maps that grouped-query heads share are applied once.
struct BlockProjections {
  Eigen::MatrixXd q_means, k_means;  // [T, H * dh], [T, unique key maps * dh]
  Eigen::MatrixXd q_cvec, k_cvec;    // [S * T, ...] the same for the stacked samples
  std::vector<Eigen::Index> key_map;  // head -> its key map's column block
  Eigen::Index head_dim = 0, samples = 0;
  Eigen::MatrixXd wq, wk;  // [H * dh, d], [unique key maps * dh, d]: the maps stacked
  std::optional<JointScales> joint;  // OLMo-2's norms over all heads

  HeadProjections of(std::size_t h) const {
    const Eigen::Index q = static_cast<Eigen::Index>(h) * head_dim, k = key_map[h] * head_dim;
    return {q_means.middleCols(q, head_dim), k_means.middleCols(k, head_dim), q_cvec.middleCols(q, head_dim),
            k_cvec.middleCols(k, head_dim), joint ? &*joint : nullptr};
  }
};

// The block's weights stacked and the means mapped; the samples' rows are left for
// projectSample, one work item each.
BlockProjections prepareProjections(const BlockHeads& block) {
  BlockProjections p;
  const auto heads = static_cast<Eigen::Index>(block.maps.size());
  p.head_dim = heads > 0 ? block.maps[0].wq.rows() : 0;
  const Eigen::Index d = block.means.cols(), t = block.means.rows();
  std::vector<std::size_t> unique_keys;
  for (std::size_t h = 0; h < block.maps.size(); ++h) {
    if (block.maps[h].wq.rows() != p.head_dim || block.maps[h].wk.rows() != p.head_dim)
      throw std::invalid_argument("analyzeBlock: heads of one block differ in width");
    std::size_t u = 0;
    while (u < unique_keys.size() && block.maps[unique_keys[u]].wk != block.maps[h].wk) ++u;
    if (u == unique_keys.size()) unique_keys.push_back(h);
    p.key_map.push_back(static_cast<Eigen::Index>(u));
  }
  p.wq.resize(heads * p.head_dim, d);
  p.wk.resize(static_cast<Eigen::Index>(unique_keys.size()) * p.head_dim, d);
  for (Eigen::Index h = 0; h < heads; ++h) p.wq.middleRows(h * p.head_dim, p.head_dim) = block.maps[static_cast<std::size_t>(h)].wq;
  for (std::size_t u = 0; u < unique_keys.size(); ++u)
    p.wk.middleRows(static_cast<Eigen::Index>(u) * p.head_dim, p.head_dim) = block.maps[unique_keys[u]].wk;
  p.q_means.noalias() = block.means * p.wq.transpose();
  p.k_means.noalias() = block.means * p.wk.transpose();
  p.samples = t > 0 ? block.samples.rows() / t : 0;
  p.q_cvec.resize(p.samples * t, p.wq.rows());
  p.k_cvec.resize(p.samples * t, p.wk.rows());
  if (heads > 0 && block.maps[0].joint) p.joint = jointScalesOfMeans(*block.maps[0].joint, block.maps[0].norm_eps, block.means, p.samples * t);
  return p;
}

// Sample c's rows: cvec = x - P, then its rows of both products.
void projectSample(const BlockHeads& block, Eigen::Index c, BlockProjections& p) {
  const Eigen::Index t = block.means.rows();
  const Eigen::MatrixXd cvec = block.samples.middleRows(c * t, t) - block.means;
  p.q_cvec.middleRows(c * t, t).noalias() = cvec * p.wq.transpose();
  p.k_cvec.middleRows(c * t, t).noalias() = cvec * p.wk.transpose();
  if (p.joint) jointScalesOfSamples(*block.maps[0].joint, block.maps[0].norm_eps, block.samples.middleRows(c * t, t), c * t, *p.joint);
}

// Block means of `m` on an at most side x side grid: what a small heatmap can show.
Eigen::MatrixXd thumbnail(const Eigen::MatrixXd& m, Eigen::Index side) {
  const Eigen::Index rows = std::min(side, m.rows()), cols = std::min(side, m.cols());
  Eigen::MatrixXd out(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index c = 0; c < cols; ++c) {
      const Eigen::Index r0 = r * m.rows() / rows, r1 = (r + 1) * m.rows() / rows;
      const Eigen::Index c0 = c * m.cols() / cols, c1 = (c + 1) * m.cols() / cols;
      out(r, c) = m.block(r0, c0, r1 - r0, c1 - c0).mean();
    }
  return out;
}

bool asked(const HeadOptions& options, int64_t block, int64_t head) {
  return std::find(options.qk_maps.begin(), options.qk_maps.end(), std::make_pair(block, head)) != options.qk_maps.end();
}

HeadReport analyzeHead(const BlockHeads& block, std::size_t h, const HeadOptions& options, const PositionalBasis& basis,
                       const BlockProjections& projections) {
  KernelSettings settings = block.kernel[h];
  settings.skip = options.kernel_skip;
  const HeadMaps& maps = block.maps[h];
  const bool keep_maps = asked(options, block.block, static_cast<int64_t>(h));
  SampledAttention sampled = sampleAttention(maps, projections.of(h), settings, keep_maps);
  const Eigen::MatrixXd& mean_kernel = sampled.mean_kernel;
  const bool use_sampled = options.query == QueryMode::kSampled && sampled.samples > 0;
  const Eigen::MatrixXd& kernel = use_sampled ? sampled.kernel : mean_kernel;

  const Eigen::Index last = kernel.rows() - 1;
  HeadReport r;
  r.block = block.block;
  r.head = static_cast<int64_t>(h);
  r.etc_curve = effectiveTokenCount(kernel);
  r.etc = r.etc_curve[last];
  r.keys = detail::keyRange(last, kernel.cols(), settings).count;
  r.window90 = window90(kernel, last);
  r.kind = *parseHeadKind(classify(r.etc, r.keys, options.thresholds));  // classify names one of the three
  r.profile = kernel.row(last).transpose();
  r.kernel_thumb = thumbnail(kernel, kThumbSide);
  if (options.keep_kernels || (options.keep_first_block_kernels && block.block == 0)) {
    r.kernel = kernel.cast<float>();
    r.mean_query_kernel = mean_kernel.cast<float>();
  }
  r.etc_mean_query = effectiveTokenCount(mean_kernel)[last];
  r.samples = sampled.samples;
  r.denominator_cv = sampled.denominator_cv;
  r.contextual = r.kind != HeadKind::kLocal && r.denominator_cv < options.contextual_cv;  // false for NaN
  r.qk_shares = sampled.qk_shares;
  const Eigen::MatrixXd subspace = basis.top();
  r.qk_energy_pos = positionalEnergyShare(maps, subspace);
  r.qk_rank = subspace.cols();
  if (keep_maps) r.qk_basis = qkInPositionalBasis(maps, basis, detail::logitScale(maps, settings));
  r.kernel_tv = sampled.samples > 0 ? meanRowTv(sampled.attention, kernel, settings.skip)
                                    : std::numeric_limits<double>::quiet_NaN();
  r.equivariance_tv = translationEquivarianceTv(kernel, settings);
  if (settings.positions.sink) {
    // What each row's keys did not take went to the sink.
    auto sunk = [&](const Eigen::MatrixXd& rows) {
      const Eigen::Index queries = rows.rows() - settings.skip;
      return queries > 0 ? 1.0 - rows.bottomRows(queries).sum() / static_cast<double>(queries)
                         : std::numeric_limits<double>::quiet_NaN();
    };
    r.kernel_learned_sink_share = sunk(kernel);
    if (sampled.samples > 0) r.learned_sink_share = sunk(sampled.attention);
  }
  r.rope_bands = ropeBands(maps, projections.of(h), settings, !use_sampled);
  r.sink_share = sampled.key0_share;
  r.first_keys_share = sampled.first_keys_share;
  r.self_share = sampled.self_share;
  r.kernel_query_spread = sampled.kernel_spread;
  r.attention_keys90 = sampled.keys90;
  r.attention_entropy = sampled.entropy;
  r.qk_maps = std::move(sampled.maps);
  if (options.repeat_period > 0 && sampled.samples > 0) {
    // Induction: from the second copy on, the key after the previous copy of the query's token.
    r.induction_score = lagScore(sampled.attention, options.repeat_period - 1, options.repeat_period, settings);
    r.previous_token_score = lagScore(sampled.attention, 1, 1, settings);
  }
  return r;
}

}  // namespace

double lagScore(const Eigen::MatrixXd& attention, Eigen::Index lag, Eigen::Index first_query, const KernelSettings& settings) {
  double sum = 0;
  Eigen::Index queries = 0;
  for (Eigen::Index n = std::max(lag, first_query); n < attention.rows(); ++n) {
    const auto keys = detail::keyRange(n, attention.cols(), settings);
    const Eigen::Index key = n - lag;
    if (key < keys.first || key >= keys.first + keys.count) continue;
    sum += attention(n, key);
    ++queries;
  }
  return queries > 0 ? sum / static_cast<double>(queries) : std::numeric_limits<double>::quiet_NaN();
}

std::vector<HeadReport> analyzeBlock(const BlockHeads& block, const HeadOptions& options, unsigned threads) {
  if (options.kernel_skip >= block.means.rows())
    throw InputError(option::kKernelSkip, "leaves no keys in windows of " + std::to_string(block.means.rows()));
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Everything on these threads, each one's products on one BLAS thread: the BLAS's own
  // threads would only compete with them, and spin between calls (the basis' SVD took
  // 0.16 s on two BLAS threads against 0.10 s on one, at GPT-2's width).
  std::optional<metrics::lapack::LimitedThreads> single;
  if (threads > 1) single.emplace(1);
  // The positional basis (one SVD) beside the samples' projections: work item 0 is the
  // SVD, the others a sample each.
  BlockProjections projections = prepareProjections(block);
  PositionalBasis basis;
  parallelFor(static_cast<std::size_t>(projections.samples) + 1, threads, [&](std::size_t item) {
    if (item == 0)
      basis = positionalBasis(block.means, options.kernel_skip, options.subspace_k, options.subspace_strategy);
    else
      projectSample(block, static_cast<Eigen::Index>(item - 1), projections);
  });
  std::vector<HeadReport> out(block.maps.size());
  parallelFor(out.size(), threads, [&](std::size_t h) { out[h] = analyzeHead(block, h, options, basis, projections); });
  return out;
}

}  // namespace posgeom::heads
