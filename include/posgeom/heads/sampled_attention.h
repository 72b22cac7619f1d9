#pragma once
// What one head does on sequences sampled from the corpus. Each sampled attention input
// splits as x[c,t] = P_t + cvec[c,t] (P_t the mean at position t, global mean included,
// as in the kernel), so every logit splits into pos-pos, pos-cvec, cvec-pos and cvec-cvec
// parts (the query bias counts as positional). Everything runs over the kernel's keys
// (from the kernel skip on), so that the numbers compare with the kernel's. Eigen only.
#include <Eigen/Dense>
#include <array>
#include <limits>
#include <string>
#include <vector>

#include "posgeom/heads/positional_kernel.h"

namespace posgeom::heads {

struct SampledAttention {
  int64_t samples = 0;
  // [T, T]: K_n(i) with the sampled queries q(x[c,n]) against the mean keys k0(P_i),
  // averaged over the samples c (the default kernel).
  Eigen::MatrixXd kernel;
  // [T, T]: positionalKernel's, the mean embedding P_n as the query, from the same
  // projections (also without samples).
  Eigen::MatrixXd mean_kernel;
  // The softmax denominator Z[c,n] of the actual logits: std_c / mean_c at each query
  // position, averaged over positions. Small: the denominator hardly depends on context,
  // so the attention factors into a positional and a contextual part. NaN below 2 samples.
  double denominator_cv = std::numeric_limits<double>::quiet_NaN();
  // Squared Frobenius norm of each logit part over the sum of the four, over all sampled
  // queries and their keys: pos-pos, pos-cvec, cvec-pos, cvec-cvec.
  std::array<double, 4> qk_shares{};
  // The actual attention (real queries and keys): keys holding 90% of a query's weight,
  // and the entropy of its weights in nats, both averaged over queries.
  double keys90 = std::numeric_limits<double>::quiet_NaN();
  double entropy = std::numeric_limits<double>::quiet_NaN();
  // [T, T]: the actual attention (real queries and keys), averaged over the samples.
  Eigen::MatrixXd attention;
  // How much the kernel depends on the query's context: over the queries, the mean of
  // ½ Σ_i std_c K^c_n(i), the spread across samples c of the sampled-query kernel rows
  // (0: every sample's query gives the same kernel). NaN below 2 samples.
  double kernel_spread = std::numeric_limits<double>::quiet_NaN();
  // Over the whole softmax, the skip's keys in it too (attention sinks, issue 36): the weight
  // on key 0, on the first `skip` keys (NaN for a skip of 0) and on the query's own key,
  // averaged over the samples and the queries from max(skip, 1) on. NaN without samples.
  double key0_share = std::numeric_limits<double>::quiet_NaN();
  double first_keys_share = std::numeric_limits<double>::quiet_NaN();
  double self_share = std::numeric_limits<double>::quiet_NaN();
  // When asked: the first sample's [T, T] maps (query rows, key columns), scaled logits
  // pos-pos, pos-cvec, cvec-pos, cvec-cvec, their total with the ALiBi bias, and the
  // attention; zero outside each query's keys.
  std::vector<Eigen::MatrixXd> maps;
};

// Names of the maps above, in order.
const std::vector<std::string>& qkMapNames();

// `means` [T, d]; `samples` [S * T, d], the attention inputs of S sampled sequences stacked.
SampledAttention sampleAttention(const HeadMaps& head, const Eigen::MatrixXd& means, const Eigen::MatrixXd& samples,
                                 const KernelSettings& settings, bool keep_maps = false);

// OLMo-2's norms over all heads (HeadMaps::joint): each row's inverse RMS over every head's
// q, and k, for the mean inputs [T] and for the stacked samples [S * T] (x itself, not cvec).
struct JointScales {
  Eigen::VectorXd q_means, k_means, q_samples, k_samples;
};
// Those of `means`, with room for `sample_rows` rows of samples.
JointScales jointScalesOfMeans(const JointQkNorm& joint, double eps, const Eigen::MatrixXd& means, Eigen::Index sample_rows);
// Those of `samples` rows [first, first + rows) written into `scales` (sized by the caller).
void jointScalesOfSamples(const JointQkNorm& joint, double eps, const Eigen::Ref<const Eigen::MatrixXd>& rows,
                          Eigen::Index first, JointScales& scales);

// One head's inputs already mapped by its W_Q and W_K, bias and RoPE not yet applied, as a
// block's heads get them from one product for all of them (analyzeBlock).
struct HeadProjections {
  Eigen::Ref<const Eigen::MatrixXd> q_means;  // [T, dh]: P W_Q^T
  Eigen::Ref<const Eigen::MatrixXd> k_means;  // [T, dh]: P W_K^T
  Eigen::Ref<const Eigen::MatrixXd> q_cvec;   // [S * T, dh]: cvec W_Q^T of the stacked samples
  Eigen::Ref<const Eigen::MatrixXd> k_cvec;   // [S * T, dh]
  const JointScales* joint = nullptr;         // where the head's maps have a joint norm
};

// The same from projections: `head` gives the query bias and the logit scale.
SampledAttention sampleAttention(const HeadMaps& head, const HeadProjections& projections, const KernelSettings& settings,
                                 bool keep_maps = false);

// Keys, heaviest first, needed to hold `mass` of a row of weights summing to one.
int64_t keysHolding(Eigen::VectorXd weights, double mass);

}  // namespace posgeom::heads
