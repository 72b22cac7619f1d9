#include "posgeom/heads/sampled_attention.h"

#include <algorithm>
#include <functional>
#include <memory>

#include <cmath>

#include "head_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::heads;

TEST(SampledAttention, ConstantContentGivesTheMeanKernel) {
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(16, 6);
  const HeadMaps head = randomHead(4, 6);
  for (double theta : {0.0, 50.0}) {
    KernelSettings s;
    s.skip = 3;
    if (theta > 0) s.positions.rope.inverse_frequencies = plainRope(theta, 4);
    if (theta == 0) s.positions.additive = positions::alibiTerm(0.3);
    const auto sampled = sampleAttention(head, means, stackSequences({means, means, means}), s);
    const Eigen::MatrixXd kernel = positionalKernel(head, means, s);
    EXPECT_EQ(sampled.samples, 3);
    EXPECT_LT((sampled.kernel - kernel).cwiseAbs().maxCoeff(), 1e-12);
    // Constant content: the attention is the kernel, and no sample's query differs.
    EXPECT_LT((sampled.attention - kernel).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_NEAR(sampled.kernel_spread, 0.0, 1e-7);
    EXPECT_NEAR(sampled.denominator_cv, 0.0, 1e-12);  // every context alike
    EXPECT_NEAR(sampled.qk_shares[0], 1.0, 1e-15);    // no cvec at all
    double entropy = 0, keys90 = 0;
    for (Eigen::Index n = 3; n < 16; ++n) {
      const Eigen::VectorXd row = kernel.row(n).transpose();
      for (double a : row)
        if (a > 0) entropy -= a * std::log(a) / 13.0;
      keys90 += static_cast<double>(keysHolding(row, 0.9)) / 13.0;
    }
    EXPECT_NEAR(sampled.entropy, entropy, 1e-12);
    EXPECT_NEAR(sampled.keys90, keys90, 1e-12);
  }
}

// The mean-embedding kernel comes out of the same products as the sampled one: equal to
// positionalKernel's own for every kind of head, with samples and without, across blocks
// of queries (T = 75 > 32), a sliding window, RoPE, ALiBi, a key bias, a norm and a clamp.
TEST(SampledAttention, TheMeanQueryKernelIsPositionalKernels) {
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(75, 6);
  const Eigen::MatrixXd samples = stackSequences({Eigen::MatrixXd::Random(75, 6), Eigen::MatrixXd::Random(75, 6)});
  for (int variant = 0; variant < 6; ++variant) {
    HeadMaps head = randomHead(4, 6);
    KernelSettings s;
    s.skip = 3;
    if (variant == 1) s.positions.mask.causal = false;
    if (variant == 2) {
      s.positions.mask.window = 20;
      s.positions.additive = positions::alibiTerm(0.2);
    }
    if (variant == 3) {
      s.positions.rope.inverse_frequencies = plainRope(100.0, 4);
      head.bk = Eigen::VectorXd::Random(4);
    }
    if (variant == 4) {
      head.q_norm = Eigen::VectorXd::Random(4);
      head.k_norm = Eigen::VectorXd::Random(4);
      head.clip = 0.8;
    }
    if (variant == 5) {  // OLMo-2: norms over this head and another, RoPE turning after them
      head.q_norm = Eigen::VectorXd::Random(4);
      head.k_norm = Eigen::VectorXd::Random(4);
      head.bk = Eigen::VectorXd::Random(4);
      head.joint = jointOver(head, randomHead(4, 6));
      s.positions.rope.inverse_frequencies = plainRope(100.0, 4);
    }
    const Eigen::MatrixXd expected = positionalKernel(head, means, s);
    for (const Eigen::MatrixXd* x : {&samples, static_cast<const Eigen::MatrixXd*>(nullptr)}) {
      const auto sampled = sampleAttention(head, means, x ? *x : Eigen::MatrixXd(0, 6), s);
      ASSERT_EQ(sampled.mean_kernel.rows(), 75) << variant;
      EXPECT_LT((sampled.mean_kernel - expected).cwiseAbs().maxCoeff(), 1e-13) << variant;
      EXPECT_GT(expected.row(74).maxCoeff(), 0.0);
    }
  }
}

// OLMo-2's norms over all heads, from the definition: each sample's query and key at each
// position divided by the root mean square of every head's projection there, then scaled by
// the head's part of the weights; the actual attention averaged over the samples.
TEST(SampledAttention, AJointNormsAttentionIsTheModelsByHand) {
  const Eigen::Index t = 12, d = 6, dh = 4;
  const double eps = 1e-5;
  HeadMaps head = randomHead(dh, d);
  head.bk = Eigen::VectorXd::Random(dh);
  head.q_norm = Eigen::VectorXd::Random(dh);
  head.k_norm = Eigen::VectorXd::Random(dh);
  head.norm_eps = eps;
  head.joint = jointOver(head, randomHead(dh, d));
  KernelSettings s;
  s.skip = 2;
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const std::vector<Eigen::MatrixXd> seqs{Eigen::MatrixXd::Random(t, d), Eigen::MatrixXd::Random(t, d)};
  const auto sampled = sampleAttention(head, means, stackSequences(seqs), s);
  auto normed = [&](const Eigen::RowVectorXd& x, const Eigen::MatrixXd& all_w, const Eigen::VectorXd& all_b,
                    const Eigen::MatrixXd& w, const Eigen::VectorXd& b, const Eigen::VectorXd& weights) {
    const Eigen::VectorXd all = all_w * x.transpose() + all_b;
    const double rms = std::sqrt(all.squaredNorm() / static_cast<double>(all.size()) + eps);
    return Eigen::VectorXd(((w * x.transpose() + b) / rms).cwiseProduct(weights));
  };
  Eigen::MatrixXd attention = Eigen::MatrixXd::Zero(t, t);
  for (const auto& x : seqs)
    for (Eigen::Index n = s.skip; n < t; ++n) {
      const Eigen::VectorXd q = normed(x.row(n), head.joint->wq, head.joint->bq, head.wq, head.bq, head.q_norm);
      Eigen::VectorXd logits(n - s.skip + 1);
      for (Eigen::Index i = s.skip; i <= n; ++i)
        logits[i - s.skip] = q.dot(normed(x.row(i), head.joint->wk, head.joint->bk, head.wk, head.bk, head.k_norm)) / 2.0;
      const Eigen::VectorXd a = (logits.array() - logits.maxCoeff()).exp().matrix();
      attention.row(n).segment(s.skip, n - s.skip + 1) += a.transpose() / a.sum() / 2.0;
    }
  EXPECT_LT((sampled.attention - attention).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GT(attention.maxCoeff(), 0.0);
}

// DeepSeek's latent norms: a query without a latent (no scale), keys scaled by their latent's
// inverse RMS but for their first two coordinates (the rotary part every head shares).
TEST(SampledAttention, ALatentNormLeavesTheKeysSharedPartByHand) {
  const Eigen::Index t = 10, d = 6, dh = 4, rank = 3;
  const double eps = 1e-6;
  HeadMaps head = randomHead(dh, d);
  head.bk = Eigen::VectorXd::Random(dh);
  head.norm_eps = eps;
  JointQkNorm latent;
  latent.wk = Eigen::MatrixXd::Random(rank, d);
  latent.bk = Eigen::VectorXd::Random(rank);
  latent.q_unscaled = dh;
  latent.k_unscaled = 2;
  head.joint = std::make_shared<const JointQkNorm>(latent);
  KernelSettings s;
  s.skip = 1;
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const std::vector<Eigen::MatrixXd> seqs{Eigen::MatrixXd::Random(t, d), Eigen::MatrixXd::Random(t, d)};
  const auto sampled = sampleAttention(head, means, stackSequences(seqs), s);
  Eigen::MatrixXd attention = Eigen::MatrixXd::Zero(t, t);
  for (const auto& x : seqs)
    for (Eigen::Index n = s.skip; n < t; ++n) {
      const Eigen::VectorXd q = head.wq * x.row(n).transpose() + head.bq;
      Eigen::VectorXd logits(n - s.skip + 1);
      for (Eigen::Index i = s.skip; i <= n; ++i) {
        Eigen::VectorXd k = head.wk * x.row(i).transpose() + head.bk;
        const Eigen::VectorXd z = latent.wk * x.row(i).transpose() + latent.bk;
        k.tail(dh - 2) /= std::sqrt(z.squaredNorm() / rank + eps);
        logits[i - s.skip] = q.dot(k) / 2.0;
      }
      const Eigen::VectorXd a = (logits.array() - logits.maxCoeff()).exp().matrix();
      attention.row(n).segment(s.skip, n - s.skip + 1) += a.transpose() / a.sum() / 2.0;
    }
  EXPECT_LT((sampled.attention - attention).cwiseAbs().maxCoeff(), 1e-12);
}

// DeBERTa's disentangled terms, bidirectional: each logit q_n . k_i + q_n . K[c2p row] +
// k_i . Q[p2c row], scaled; the four parts of the split still sum to it, and the sampled-query
// kernel is the sample's query against the positional keys with both terms.
TEST(SampledAttention, DisentangledTermsAreTheModelsByHand) {
  const Eigen::Index t = 9, d = 5, dh = 4, span = 3;
  HeadMaps head = randomHead(dh, d);
  head.bk = Eigen::VectorXd::Random(dh);
  KernelSettings s;
  s.skip = 0;
  s.positions.mask.causal = false;
  s.positions.scale = 0.3;
  positions::RelativeVectors v;
  v.rows = {span, 4, 6};
  v.dims = dh;
  const Eigen::MatrixXd key_table = Eigen::MatrixXd::Random(2 * span, dh), query_table = Eigen::MatrixXd::Random(2 * span, dh);
  for (Eigen::Index r = 0; r < 2 * span; ++r)
    for (Eigen::Index j = 0; j < dh; ++j) v.keys.push_back(key_table(r, j)), v.queries.push_back(query_table(r, j));
  s.positions.relative_vectors = v;
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const std::vector<Eigen::MatrixXd> seqs{Eigen::MatrixXd::Random(t, d), Eigen::MatrixXd::Random(t, d)};
  const auto sampled = sampleAttention(head, means, stackSequences(seqs), s, /*keep_maps=*/true);
  auto logit = [&](const Eigen::VectorXd& q, const Eigen::VectorXd& k, Eigen::Index n, Eigen::Index i) {
    return 0.3 * (q.dot(k) + q.dot(key_table.row(v.rows.c2pRow(n, i))) + k.dot(query_table.row(v.rows.p2cRow(n, i))));
  };
  Eigen::MatrixXd attention = Eigen::MatrixXd::Zero(t, t), kernel = Eigen::MatrixXd::Zero(t, t), total(t, t);
  for (std::size_t c = 0; c < seqs.size(); ++c)
    for (Eigen::Index n = 0; n < t; ++n) {
      const Eigen::VectorXd q = head.wq * seqs[c].row(n).transpose() + head.bq;
      Eigen::VectorXd full(t), positional(t);
      for (Eigen::Index i = 0; i < t; ++i) {
        full[i] = logit(q, head.wk * seqs[c].row(i).transpose() + head.bk, n, i);
        positional[i] = logit(q, head.wk * means.row(i).transpose() + head.bk, n, i);
      }
      if (c == 0) total.row(n) = full.transpose();
      const Eigen::VectorXd a = (full.array() - full.maxCoeff()).exp().matrix(), k = (positional.array() - positional.maxCoeff()).exp().matrix();
      attention.row(n) += a.transpose() / a.sum() / 2.0;
      kernel.row(n) += k.transpose() / k.sum() / 2.0;
    }
  EXPECT_LT((sampled.attention - attention).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((sampled.kernel - kernel).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((sampled.maps[4] - total).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((sampled.maps[0] + sampled.maps[1] + sampled.maps[2] + sampled.maps[3] - total).cwiseAbs().maxCoeff(), 1e-12);
  // Skipping two keys, with a learned sink: the sink shares over the whole softmax (every key
  // and the sink), from query 2 on, keys before the skip with both terms too.
  s.skip = 2;
  s.positions.sink = 0.7;
  const auto skipped = sampleAttention(head, means, stackSequences(seqs), s);
  double key0 = 0, first = 0, self = 0, queries = 0;
  for (const auto& x : seqs)
    for (Eigen::Index n = 2; n < t; ++n, ++queries) {
      const Eigen::VectorXd q = head.wq * x.row(n).transpose() + head.bq;
      Eigen::VectorXd full(t);
      for (Eigen::Index i = 0; i < t; ++i) full[i] = logit(q, head.wk * x.row(i).transpose() + head.bk, n, i);
      const double z = (full.array() - full.maxCoeff()).exp().sum() + std::exp(0.7 - full.maxCoeff());
      const Eigen::VectorXd a = (full.array() - full.maxCoeff()).exp().matrix() / z;
      key0 += a[0], first += a[0] + a[1], self += a[n];
    }
  EXPECT_NEAR(skipped.key0_share, key0 / queries, 1e-12);
  EXPECT_NEAR(skipped.first_keys_share, first / queries, 1e-12);
  EXPECT_NEAR(skipped.self_share, self / queries, 1e-12);
}

// Issue 36's sinks, over the whole softmax though the kernel skips 3 keys: by hand, the weight
// on key 0, on keys 0..2 and on the query's own key, averaged over samples and queries n >= 3;
// a window of 4 keys hides key 0 from the later queries.
TEST(SampledAttention, SinkSharesAreOverTheWholeSoftmaxByHand) {
  const Eigen::Index t = 11, d = 5, dh = 4;
  const HeadMaps head = randomHead(dh, d);
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const std::vector<Eigen::MatrixXd> seqs{Eigen::MatrixXd::Random(t, d), Eigen::MatrixXd::Random(t, d), Eigen::MatrixXd::Random(t, d)};
  for (const int64_t window : {0, 4}) {
    KernelSettings s;
    s.skip = 3;
    s.positions.mask.window = window;
    const auto sampled = sampleAttention(head, means, stackSequences(seqs), s);
    double key0 = 0, first = 0, self = 0, queries = 0;
    for (const auto& x : seqs)
      for (Eigen::Index n = 3; n < t; ++n, ++queries) {
        const Eigen::Index lo = window > 0 ? std::max<Eigen::Index>(0, n - window + 1) : 0;
        const Eigen::VectorXd q = head.wq * x.row(n).transpose() + head.bq;
        Eigen::VectorXd logits(n - lo + 1);
        for (Eigen::Index i = lo; i <= n; ++i) logits[i - lo] = q.dot(head.wk * x.row(i).transpose()) / 2.0;
        const Eigen::VectorXd a = (logits.array() - logits.maxCoeff()).exp().matrix() / (logits.array() - logits.maxCoeff()).exp().sum();
        for (Eigen::Index i = lo; i <= n; ++i) {
          if (i == 0) key0 += a[i - lo];
          if (i < 3) first += a[i - lo];
        }
        self += a[n - lo];
      }
    EXPECT_NEAR(sampled.key0_share, key0 / queries, 1e-12) << window;
    EXPECT_NEAR(sampled.first_keys_share, first / queries, 1e-12) << window;
    EXPECT_NEAR(sampled.self_share, self / queries, 1e-12) << window;
    EXPECT_GT(sampled.first_keys_share, sampled.key0_share) << window;
  }
}

TEST(SampledAttention, ZeroQueriesAttendUniformly) {
  HeadMaps head = randomHead(4, 6);
  head.wq.setZero();
  head.bq.setZero();
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(12, 6);
  KernelSettings s;
  s.skip = 2;
  s.positions.mask.causal = false;
  const auto sampled = sampleAttention(head, means, stackSequences({Eigen::MatrixXd::Random(12, 6), Eigen::MatrixXd::Random(12, 6)}), s);
  EXPECT_NEAR(sampled.entropy, std::log(10.0), 1e-12);  // 10 keys, equal weights
  EXPECT_NEAR(sampled.keys90, 9.0, 1e-12);
  EXPECT_NEAR(sampled.denominator_cv, 0.0, 1e-12);
  EXPECT_NEAR(sampled.kernel(5, 2), 0.1, 1e-15);
  for (double share : sampled.qk_shares) EXPECT_EQ(share, 0.0);  // every logit part vanishes
}

// From the definition, query by query and key by key: the shares, the denominator's
// spread and the kernel, short windows and ones longer than a causal product block.
TEST(SampledAttention, SharesKernelAndDenominatorSpreadByHand) {
  for (const auto& [t, causal] : {std::pair{6, true}, std::pair{75, true}, std::pair{40, false}}) {
    const int d = 3, dh = 2, skip = t > 6 ? 4 : 1;
    const HeadMaps head = randomHead(dh, d);
    const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
    const std::vector<Eigen::MatrixXd> seqs{Eigen::MatrixXd::Random(t, d), Eigen::MatrixXd::Random(t, d),
                                            Eigen::MatrixXd::Random(t, d)};
    KernelSettings s;
    s.skip = skip;
    s.positions.mask.causal = causal;
    const auto sampled = sampleAttention(head, means, stackSequences(seqs), s);
    double energy[4] = {0, 0, 0, 0}, cv = 0, spread = 0;
    Eigen::MatrixXd kernel = Eigen::MatrixXd::Zero(t, t), attention = Eigen::MatrixXd::Zero(t, t);
    for (int n = skip; n < t; ++n) {
      double z[3];
      std::vector<Eigen::VectorXd> sample_kernels;  // K^c_n over all keys, for the spread
      const int last = causal ? n : t - 1;
      for (int c = 0; c < 3; ++c) {
        const Eigen::VectorXd qp = head.wq * means.row(n).transpose() + head.bq,
                              qc = head.wq * (seqs[c].row(n) - means.row(n)).transpose();
        z[c] = 0;
        Eigen::VectorXd kernel_logits = Eigen::VectorXd::Zero(t), logits = Eigen::VectorXd::Zero(t);
        for (int i = skip; i <= last; ++i) {
          const Eigen::VectorXd kp = head.wk * means.row(i).transpose(), kc = head.wk * (seqs[c].row(i) - means.row(i)).transpose();
          const double parts[4] = {qp.dot(kp), qp.dot(kc), qc.dot(kp), qc.dot(kc)};
          for (int j = 0; j < 4; ++j) energy[j] += parts[j] * parts[j];
          z[c] += std::exp((parts[0] + parts[1] + parts[2] + parts[3]) / std::sqrt(2.0));
          kernel_logits[i] = (parts[0] + parts[2]) / std::sqrt(2.0);  // sampled query, mean key
          logits[i] = (parts[0] + parts[1] + parts[2] + parts[3]) / std::sqrt(2.0);  // the real attention
        }
        const Eigen::VectorXd weights = kernel_logits.segment(skip, last - skip + 1).array().exp();
        kernel.row(n).segment(skip, last - skip + 1) += weights.transpose() / weights.sum() / 3.0;
        sample_kernels.push_back(Eigen::VectorXd::Zero(t));
        sample_kernels.back().segment(skip, last - skip + 1) = weights / weights.sum();
        const Eigen::VectorXd real = logits.segment(skip, last - skip + 1).array().exp();
        attention.row(n).segment(skip, last - skip + 1) += real.transpose() / real.sum() / 3.0;
      }
      // The spread: half the summed standard deviation (over the 3 samples) of each key's weight.
      const Eigen::VectorXd mean_kernel = (sample_kernels[0] + sample_kernels[1] + sample_kernels[2]) / 3.0;
      Eigen::VectorXd variance = Eigen::VectorXd::Zero(t);
      for (const auto& k : sample_kernels) variance += (k - mean_kernel).cwiseAbs2() / 3.0;
      spread += 0.5 * variance.cwiseSqrt().sum() / (t - skip);
      const double mean = (z[0] + z[1] + z[2]) / 3;
      const double var = ((z[0] - mean) * (z[0] - mean) + (z[1] - mean) * (z[1] - mean) + (z[2] - mean) * (z[2] - mean)) / 3;
      cv += std::sqrt(var) / mean / (t - skip);
    }
    const double total = energy[0] + energy[1] + energy[2] + energy[3];
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(sampled.qk_shares[static_cast<size_t>(j)], energy[j] / total, 1e-12) << t;
    EXPECT_NEAR(sampled.denominator_cv, cv, 1e-12) << t;
    EXPECT_GT(cv, 0.01);
    EXPECT_LT((sampled.kernel - kernel).cwiseAbs().maxCoeff(), 1e-12) << t;
    EXPECT_LT((sampled.attention - attention).cwiseAbs().maxCoeff(), 1e-12) << t;
    EXPECT_NEAR(sampled.kernel_spread, spread, 1e-9) << t;
    EXPECT_GT(spread, 1e-3) << t;  // random contexts: the kernel does depend on them
  }
}

TEST(SampledAttention, OneSampleHasNoSpreadAndNoneHasNothing) {
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(8, 4);
  KernelSettings s;
  s.skip = 1;
  EXPECT_TRUE(std::isnan(sampleAttention(randomHead(2, 4), means, means, s).denominator_cv));
  EXPECT_TRUE(std::isnan(sampleAttention(randomHead(2, 4), means, means, s).kernel_spread));
  const auto none = sampleAttention(randomHead(2, 4), means, Eigen::MatrixXd(0, 4), s);
  EXPECT_EQ(none.samples, 0);
  EXPECT_TRUE(std::isnan(none.entropy));
}

TEST(SampledAttention, KeysHoldingCountsHeaviestFirst) {
  Eigen::VectorXd w(5);
  w << 0.05, 0.5, 0.05, 0.3, 0.1;
  EXPECT_EQ(keysHolding(w, 0.9), 3);  // 0.5 + 0.3 + 0.1
  EXPECT_EQ(keysHolding(w, 0.5), 1);
  EXPECT_EQ(keysHolding(w, 1.0), 5);
}

// Against the definition: sort descending and count until the mass is held.
TEST(SampledAttention, KeysHoldingIsTheSortedCount) {
  std::srand(7);
  for (int trial = 0; trial < 300; ++trial) {
    const Eigen::Index n = 1 + trial % 97;
    Eigen::VectorXd w = Eigen::VectorXd::Random(n).cwiseAbs();
    if (trial % 5 == 0) w.head(n / 2).setConstant(0.25);  // ties
    if (trial % 7 == 0) w.setZero(), w[n / 3] = 1;        // one key holds everything
    if (trial % 3 == 0) w = (60.0 * w.array()).exp();     // weights over dozens of octaves
    w /= w.sum();
    for (const double mass : {0.1, 0.5, 0.9, 0.999, 1.0}) {
      Eigen::VectorXd sorted = w;
      std::sort(sorted.begin(), sorted.end(), std::greater<>());
      int64_t want = n;
      double sum = 0;
      for (Eigen::Index i = 0; i < n; ++i)
        if ((sum += sorted[i]) >= mass - 1e-12) {
          want = i + 1;
          break;
        }
      EXPECT_EQ(keysHolding(w, mass), want) << "n " << n << " mass " << mass << " trial " << trial;
    }
  }
  EXPECT_EQ(keysHolding(Eigen::VectorXd(), 0.9), 0);
}

}  // namespace
}  // namespace posgeom::testing
