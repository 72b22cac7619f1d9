#include "posgeom/heads/head_analysis.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "posgeom/base/error.h"
#include "posgeom/heads/qk_subspace.h"
#include "posgeom/metrics/lapack.h"
#include "posgeom/heads/sampled_attention.h"

namespace posgeom::heads {

QueryMode parseQueryMode(const std::string& name) {
  if (name == "sampled") return QueryMode::kSampled;
  if (name == "mean") return QueryMode::kMeanEmbedding;
  throw InputError("--kernel-query", "'" + name + "' (use sampled or mean)");
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
      throw InputError("--qk-heads", "'" + item + "' is not BLOCK.HEAD (0-based block, e.g. 3.0)");
    out.emplace_back(block, head);
  }
  return out;
}

namespace {

HeadReport analyzeHead(const BlockHeads& block, std::size_t h, const HeadOptions& options, const Eigen::MatrixXd& subspace) {
  KernelSettings settings = block.kernel[h];
  settings.skip = options.kernel_skip;
  const HeadMaps& maps = block.maps[h];
  const Eigen::MatrixXd mean_kernel = positionalKernel(maps, block.means, settings);
  const bool keep_maps = std::find(options.qk_maps.begin(), options.qk_maps.end(),
                                   std::make_pair(block.block, static_cast<int64_t>(h))) != options.qk_maps.end();
  SampledAttention sampled = sampleAttention(maps, block.means, block.samples, settings, keep_maps);
  const bool use_sampled = options.query == QueryMode::kSampled && sampled.samples > 0;
  const Eigen::MatrixXd& kernel = use_sampled ? sampled.kernel : mean_kernel;

  const Eigen::Index last = kernel.rows() - 1;
  HeadReport r;
  r.block = block.block;
  r.head = static_cast<int64_t>(h);
  r.etc_curve = effectiveTokenCount(kernel);
  r.etc = r.etc_curve[last];
  r.keys = settings.causal ? last - settings.skip + 1 : kernel.cols() - settings.skip;
  r.window90 = window90(kernel, last);
  r.kind = classify(r.etc, r.keys, options.thresholds);
  r.profile = kernel.row(last).transpose();
  r.etc_mean_query = effectiveTokenCount(mean_kernel)[last];
  r.samples = sampled.samples;
  r.denominator_cv = sampled.denominator_cv;
  r.contextual = r.kind != "local" && r.denominator_cv < options.contextual_cv;  // false for NaN
  r.qk_shares = sampled.qk_shares;
  r.qk_energy_pos = positionalEnergyShare(maps, subspace);
  r.qk_rank = subspace.cols();
  r.attention_keys90 = sampled.keys90;
  r.attention_entropy = sampled.entropy;
  r.qk_maps = std::move(sampled.maps);
  return r;
}

}  // namespace

std::vector<HeadReport> analyzeBlock(const BlockHeads& block, const HeadOptions& options, unsigned threads) {
  if (options.kernel_skip >= block.means.rows())
    throw InputError("--kernel-skip", "leaves no keys in windows of " + std::to_string(block.means.rows()));
  const Eigen::MatrixXd subspace =
      positionalSubspace(block.means, options.kernel_skip, options.subspace_k, options.subspace_strategy);
  std::vector<HeadReport> out(block.maps.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      for (std::size_t h; (h = next++) < out.size();) out[h] = analyzeHead(block, h, options, subspace);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      failure = std::current_exception();
      next = out.size();
    }
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Heads side by side, each one's products on its own thread (the BLAS's threads would
  // only compete with them).
  std::optional<metrics::lapack::LimitedThreads> single;
  if (threads > 1 && out.size() > 1) single.emplace(1);
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < std::min<std::size_t>(threads, out.size()); ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace posgeom::heads
