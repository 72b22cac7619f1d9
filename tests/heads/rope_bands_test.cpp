#include "posgeom/heads/rope_bands.h"

#include <cmath>
#include <memory>

#include "head_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::heads;

// What the report should say, from the definition: every logit of every query from the skip
// on and every key it sees, q and k turned pair by pair to their positions, each band's part
// the sum of its pairs' (or its unturned dims') products, squared about its mean over the
// query's keys; and each pair's mean norm.
struct ByDefinition {
  Eigen::VectorXd attention, kernel, q_pair_norm, k_pair_norm;
  double q_unturned_norm = 0, k_unturned_norm = 0;
};

// Band of pair j: B = min(8, F) bands of consecutive pairs, band b from pair floor(b F / B).
Eigen::Index bandOfPair(Eigen::Index j, Eigen::Index pairs) {
  const Eigen::Index count = std::min<Eigen::Index>(8, pairs);
  Eigen::Index b = 0;
  while ((b + 1) * pairs / count <= j) ++b;
  return b;
}

// Each dim's band (the unturned dims the band after the turning ones) and v turned to `pos`.
struct Turning {
  const positions::Rope& rope;
  Eigen::Index dh;
  Eigen::Index pairs() const { return static_cast<Eigen::Index>(rope.inverse_frequencies.size()); }
  std::pair<Eigen::Index, Eigen::Index> dimsOf(Eigen::Index j) const {
    return rope.interleaved() ? std::make_pair(2 * j, 2 * j + 1) : std::make_pair(j, j + pairs());
  }
  Eigen::VectorXi bands() const {
    Eigen::VectorXi out = Eigen::VectorXi::Constant(dh, static_cast<int>(std::min<Eigen::Index>(8, pairs())));
    for (Eigen::Index j = 0; j < pairs(); ++j) out[dimsOf(j).first] = out[dimsOf(j).second] = static_cast<int>(bandOfPair(j, pairs()));
    return out;
  }
  Eigen::VectorXd turned(Eigen::VectorXd v, Eigen::Index pos) const {
    for (Eigen::Index j = 0; j < pairs(); ++j) {
      const auto [a, b] = dimsOf(j);
      const double angle = static_cast<double>(pos) * rope.inverse_frequencies[static_cast<std::size_t>(j)];
      const double x = v[a], y = v[b], c = std::cos(angle) * rope.scale, s = std::sin(angle) * rope.scale;
      v[a] = x * c - y * s;
      v[b] = y * c + x * s;
    }
    return v;
  }
};

// Keys of query n: from the skip, causal or not, inside a sliding window.
bool sees(Eigen::Index n, Eigen::Index i, Eigen::Index t, const KernelSettings& s) {
  if (i < s.skip || i >= t) return false;
  if (s.positions.mask.causal && i > n) return false;
  const Eigen::Index w = s.positions.mask.window;
  return w == 0 || std::abs(n - i) < w;
}

ByDefinition byDefinition(const HeadMaps& head, const Eigen::MatrixXd& means, const Eigen::MatrixXd& samples,
                          const KernelSettings& s, bool mean_query) {
  const Eigen::Index t = means.rows(), dh = head.wq.rows(), count = samples.rows() / t;
  const Turning turning{s.positions.rope, dh};
  const Eigen::VectorXi band = turning.bands();
  const Eigen::Index bands = band.maxCoeff() + 1, pairs = turning.pairs();
  auto q = [&](const Eigen::MatrixXd& x, Eigen::Index n) { return turning.turned(head.wq * x.row(n).transpose() + head.bq, n); };
  auto k = [&](const Eigen::MatrixXd& x, Eigen::Index i) {
    Eigen::VectorXd raw = head.wk * x.row(i).transpose();
    if (head.bk.size() > 0) raw += head.bk;
    return turning.turned(raw, i);
  };
  // Query n's band parts over its keys [band, key], squared about their mean over the keys.
  auto addEnergy = [&](const Eigen::VectorXd& qn, const std::vector<Eigen::VectorXd>& keys, Eigen::VectorXd& energy) {
    Eigen::MatrixXd parts = Eigen::MatrixXd::Zero(bands, static_cast<Eigen::Index>(keys.size()));
    for (std::size_t i = 0; i < keys.size(); ++i)
      for (Eigen::Index dim = 0; dim < dh; ++dim) parts(band[dim], static_cast<Eigen::Index>(i)) += qn[dim] * keys[i][dim];
    energy += (parts.colwise() - parts.rowwise().mean()).rowwise().squaredNorm();
  };
  // The keys query n sees, turned to their positions.
  auto keysOf = [&](const Eigen::MatrixXd& x, Eigen::Index n) {
    std::vector<Eigen::VectorXd> out;
    for (Eigen::Index i = 0; i < t; ++i)
      if (sees(n, i, t, s)) out.push_back(k(x, i));
    return out;
  };
  ByDefinition d;
  d.attention = d.kernel = Eigen::VectorXd::Zero(bands);
  d.q_pair_norm = d.k_pair_norm = Eigen::VectorXd::Zero(pairs);
  auto addNorms = [&](const Eigen::VectorXd& v, Eigen::VectorXd& pair_norm, double& unturned) {
    double rest = 0;
    for (Eigen::Index dim = 0; dim < dh; ++dim)
      if (band[dim] == bands - 1 && dh > 2 * pairs) rest += v[dim] * v[dim];
    unturned += std::sqrt(rest);
    for (Eigen::Index j = 0; j < pairs; ++j) pair_norm[j] += std::hypot(v[turning.dimsOf(j).first], v[turning.dimsOf(j).second]);
  };
  for (Eigen::Index c = 0; c < count; ++c) {
    const Eigen::MatrixXd x = samples.middleRows(c * t, t);
    for (Eigen::Index n = s.skip; n < t; ++n) {
      addNorms(q(x, n), d.q_pair_norm, d.q_unturned_norm);
      addNorms(k(x, n), d.k_pair_norm, d.k_unturned_norm);
      addEnergy(q(x, n), keysOf(x, n), d.attention);
      if (!mean_query) addEnergy(q(x, n), keysOf(means, n), d.kernel);
    }
  }
  for (Eigen::Index n = s.skip; mean_query && n < t; ++n) addEnergy(q(means, n), keysOf(means, n), d.kernel);
  const double rows = static_cast<double>(count * (t - s.skip));
  d.attention /= d.attention.sum();
  d.kernel /= d.kernel.sum();
  d.q_pair_norm /= rows, d.k_pair_norm /= rows;
  d.q_unturned_norm /= rows, d.k_unturned_norm /= rows;
  return d;
}

// Acceptance: the band shares sum to 1 and are each band's part of the logits' energy, for
// sampled and mean queries, whole and partial rotation, both pairings, a key bias, YaRN's
// scale, a sliding window both ways, across blocks of queries (T = 40 > 32).
TEST(RopeBands, SharesAndNormsAreTheDefinitions) {
  const Eigen::Index t = 40, d = 7;
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const Eigen::MatrixXd samples =
      stackSequences({means + Eigen::MatrixXd::Random(t, d), means + Eigen::MatrixXd::Random(t, d), Eigen::MatrixXd::Random(t, d)});
  for (int variant = 0; variant < 4; ++variant) {
    // 0: a 20-wide head, 6 pairs turning; 1: the same interleaved, bidirectional in a window of 9;
    // 2: a 24-wide head, all 12 pairs turning (8 bands), a key bias, YaRN's scale; 3: 0 with mean queries.
    const int dh = variant == 2 ? 24 : 20;
    HeadMaps head = randomHead(dh, d);
    KernelSettings s;
    s.skip = 3;
    s.positions.rope.inverse_frequencies = plainRope(50.0, variant == 2 ? 24 : 12);
    if (variant == 1) {
      s.positions.rope.pairing = positions::RopePairing::kInterleaved;
      s.positions.mask = {false, 9};
    }
    if (variant == 2) head.bk = Eigen::VectorXd::Random(dh), s.positions.rope.scale = 1.3;
    const bool mean_query = variant == 3;
    const auto report = ropeBands(head, projectHead(head, means, samples).projections(), s, mean_query);
    ASSERT_TRUE(report) << variant;
    const auto expected = byDefinition(head, means, samples, s, mean_query);
    const Eigen::Index bands = variant == 2 ? 8 : 7;
    ASSERT_EQ(static_cast<Eigen::Index>(report->bands.size()), bands) << variant;
    EXPECT_EQ(report->unturned_band, variant != 2);
    EXPECT_NEAR(report->attention_share.sum(), 1.0, 1e-12);
    EXPECT_NEAR(report->kernel_share.sum(), 1.0, 1e-12);
    EXPECT_LT((report->attention_share - expected.attention).cwiseAbs().maxCoeff(), 1e-12) << variant;
    EXPECT_LT((report->kernel_share - expected.kernel).cwiseAbs().maxCoeff(), 1e-12) << variant;
    EXPECT_LT((report->q_pair_norm - expected.q_pair_norm).cwiseAbs().maxCoeff(), 1e-12) << variant;
    EXPECT_LT((report->k_pair_norm - expected.k_pair_norm).cwiseAbs().maxCoeff(), 1e-12) << variant;
    if (variant != 2) {
      EXPECT_NEAR(report->q_unturned_norm, expected.q_unturned_norm, 1e-12);
      EXPECT_NEAR(report->k_unturned_norm, expected.k_unturned_norm, 1e-12);
    } else {
      EXPECT_TRUE(std::isnan(report->q_unturned_norm));
    }
  }
}

// Acceptance: the kernel from every band is the head's kernel (sampled and mean queries), here
// with a Qwen3-style norm of q and k and a quarter of the head turning; and a band's kernel
// has the ETC the report gives.
TEST(RopeBands, EveryBandTogetherIsTheKernel) {
  const Eigen::Index t = 36, d = 6;
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const Eigen::MatrixXd samples = stackSequences({means + Eigen::MatrixXd::Random(t, d), Eigen::MatrixXd::Random(t, d)});
  HeadMaps head = randomHead(16, d);
  head.q_norm = Eigen::VectorXd::Random(16) * 2, head.k_norm = Eigen::VectorXd::Random(16) * 2;
  KernelSettings s;
  s.skip = 2;
  s.positions.rope.inverse_frequencies = plainRope(20.0, 4);
  const auto projected = projectHead(head, means, samples);
  const auto p = projected.projections();
  const auto sampled = sampleAttention(head, means, samples, s);
  const auto bands = static_cast<int64_t>(ropeBandsOf(s.positions.rope.inverse_frequencies, 16).size());
  ASSERT_EQ(bands, 3);  // two single pairs and the 12 unturned dims
  EXPECT_LT((bandKernel(head, p, s, false, 0, bands) - sampled.kernel).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((bandKernel(head, p, s, true, 0, bands) - sampled.mean_kernel).cwiseAbs().maxCoeff(), 1e-12);
  const auto report = ropeBands(head, p, s, false);
  ASSERT_TRUE(report);
  EXPECT_NEAR(report->etc_highest_band, effectiveTokenCount(bandKernel(head, p, s, false, 0, 1))[t - 1], 1e-9);
  EXPECT_NEAR(report->etc_lowest_band, effectiveTokenCount(bandKernel(head, p, s, false, 1, 2))[t - 1], 1e-9);
}

// A head whose q lives in one band: all of every logit is there, the mass is named by its
// half, and the other end's kernel is uniform over the last query's keys.
TEST(RopeBands, AQueryInOneBandPutsEverythingThere) {
  const Eigen::Index t = 30, d = 8, dh = 16;  // 8 pairs: a band each
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const Eigen::MatrixXd samples = stackSequences({means + Eigen::MatrixXd::Random(t, d), means + Eigen::MatrixXd::Random(t, d)});
  for (const Eigen::Index pair : {Eigen::Index{0}, Eigen::Index{6}}) {
    HeadMaps head = randomHead(dh, d);
    for (Eigen::Index dim = 0; dim < dh; ++dim)
      if (dim != pair && dim != pair + 8) head.wq.row(dim).setZero(), head.bq[dim] = 0;
    KernelSettings s;
    s.skip = 4;
    s.positions.rope.inverse_frequencies = plainRope(100.0, dh);
    const auto report = ropeBands(head, projectHead(head, means, samples).projections(), s, false);
    ASSERT_TRUE(report);
    EXPECT_NEAR(report->attention_share[pair], 1.0, 1e-12);
    EXPECT_NEAR(report->kernel_share[pair], 1.0, 1e-12);
    EXPECT_EQ(report->kernel_mass, pair == 0 ? "high" : "low");
    EXPECT_EQ(report->attention_mass, report->kernel_mass);
    EXPECT_NEAR(report->q_pair_norm.sum(), report->q_pair_norm[pair], 1e-12);
    // The band without q gives every key the same logit: ETC = the last query's 26 keys.
    EXPECT_NEAR(pair == 0 ? report->etc_lowest_band : report->etc_highest_band, double(t - s.skip), 1e-9);
  }
}

// The rows the bands split are the kernel's own for heads that shape q and k: OLMo-2's norms
// over all heads (each sample's rows their own scale), DeepSeek's latent norm leaving the
// keys' rotary part, OLMo's clamp.
TEST(RopeBands, EveryBandTogetherIsTheKernelOfShapedHeads) {
  const Eigen::Index t = 34, d = 6, dh = 4;
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const Eigen::MatrixXd samples = stackSequences({means + Eigen::MatrixXd::Random(t, d), 2 * Eigen::MatrixXd::Random(t, d)});
  for (int variant = 0; variant < 3; ++variant) {
    HeadMaps head = randomHead(dh, d);
    head.bk = Eigen::VectorXd::Random(dh);
    if (variant == 0) {
      head.q_norm = Eigen::VectorXd::Random(dh), head.k_norm = Eigen::VectorXd::Random(dh);
      head.joint = jointOver(head, randomHead(dh, d));
    } else if (variant == 1) {
      JointQkNorm latent;
      latent.wk = Eigen::MatrixXd::Random(3, d);
      latent.bk = Eigen::VectorXd::Random(3);
      latent.q_unscaled = dh;
      latent.k_unscaled = 2;
      head.joint = std::make_shared<const JointQkNorm>(latent);
    } else {
      head.clip = 0.4;
    }
    KernelSettings s;
    s.skip = 2;
    s.positions.rope.inverse_frequencies = plainRope(30.0, variant == 1 ? 2 : 4);  // DeepSeek: the first pair turns
    const auto projected = projectHead(head, means, samples);
    const auto sampled = sampleAttention(head, means, samples, s);
    const auto bands = static_cast<int64_t>(ropeBandsOf(s.positions.rope.inverse_frequencies, dh).size());
    EXPECT_LT((bandKernel(head, projected.projections(), s, false, 0, bands) - sampled.kernel).cwiseAbs().maxCoeff(), 1e-12)
        << variant;
    EXPECT_LT((bandKernel(head, projected.projections(), s, true, 0, bands) - sampled.mean_kernel).cwiseAbs().maxCoeff(), 1e-12)
        << variant;
  }
}

// Where the mass is named: a query in the unturned dims, and in the middle band of three
// (neither half).
TEST(RopeBands, MassInTheUnturnedDimsAndTheMiddleBand) {
  const Eigen::Index t = 20, d = 6, dh = 10;  // 3 pairs turn: bands of one pair each, 4 dims unturned
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const Eigen::MatrixXd samples = stackSequences({means + Eigen::MatrixXd::Random(t, d)});
  for (const Eigen::Index keep : {Eigen::Index{1}, Eigen::Index{8}}) {  // pair 1's dims 1 and 4, or unturned dim 8
    HeadMaps head = randomHead(int(dh), int(d));
    for (Eigen::Index dim = 0; dim < dh; ++dim)
      if (dim != keep && !(keep == 1 && dim == 4)) head.wq.row(dim).setZero(), head.bq[dim] = 0;
    KernelSettings s;
    s.skip = 1;
    s.positions.rope.inverse_frequencies = plainRope(100.0, 6);
    const auto report = ropeBands(head, projectHead(head, means, samples).projections(), s, false);
    ASSERT_TRUE(report);
    ASSERT_EQ(report->bands.size(), 4u);
    const Eigen::Index band = keep == 1 ? 1 : 3;
    EXPECT_NEAR(report->kernel_share[band], 1.0, 1e-12);
    EXPECT_EQ(report->kernel_mass, keep == 1 ? "spread" : "unturned");
    EXPECT_EQ(report->attention_mass, report->kernel_mass);
  }
}

// Queries with one key each (the skip leaves one): nothing varies over the keys, so no band
// holds a share (NaN, no mass named), rather than rounding noise summing to one.
TEST(RopeBands, NoSharesWhereNothingVaries) {
  const Eigen::Index t = 12, d = 5;
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  const Eigen::MatrixXd samples = stackSequences({means + Eigen::MatrixXd::Random(t, d)});
  const HeadMaps head = randomHead(8, int(d));
  KernelSettings s;
  s.skip = t - 1;
  s.positions.rope.inverse_frequencies = plainRope(100.0, 8);
  const auto report = ropeBands(head, projectHead(head, means, samples).projections(), s, false);
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->kernel_share.array().isNaN().all());
  EXPECT_TRUE(report->attention_share.array().isNaN().all());
  EXPECT_EQ(report->kernel_mass, "");
  EXPECT_EQ(report->attention_mass, "");
  EXPECT_GT(report->q_pair_norm.sum(), 0);  // the norms are there all the same
}

TEST(RopeBands, BandsGroupConsecutivePairsFastestFirst) {
  const auto llama = ropeBandsOf(plainRope(10000.0, 128), 128);
  ASSERT_EQ(llama.size(), 8u);
  for (std::size_t b = 0; b < 8; ++b) {
    EXPECT_EQ(llama[b].first_pair, int64_t(8 * b));
    EXPECT_EQ(llama[b].dims, 16);
  }
  EXPECT_NEAR(llama[0].shortest_wavelength, 2 * M_PI, 1e-12);  // pair 0 turns once every 2 pi positions
  EXPECT_NEAR(llama[7].longest_wavelength, 2 * M_PI * std::pow(10000.0, 126.0 / 128.0), 1e-6);
  EXPECT_LT(llama[0].longest_wavelength, llama[1].shortest_wavelength);
  // Ten pairs: sizes differing by one at most; a partial rotation's rest is a band of its own.
  const auto ten = ropeBandsOf(plainRope(10000.0, 20), 32);
  ASSERT_EQ(ten.size(), 9u);
  int64_t pairs = 0;
  for (std::size_t b = 0; b < 8; ++b) {
    EXPECT_EQ(ten[b].first_pair, pairs);
    EXPECT_TRUE(ten[b].pairs == 1 || ten[b].pairs == 2);
    pairs += ten[b].pairs;
  }
  EXPECT_EQ(pairs, 10);
  EXPECT_EQ(ten[8].pairs, 0);
  EXPECT_EQ(ten[8].dims, 12);
  EXPECT_TRUE(std::isinf(ten[8].shortest_wavelength));
  EXPECT_TRUE(ropeBandsOf({}, 16).empty());
}

TEST(RopeBands, NoneWithoutRope) {
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(10, 4);
  const HeadMaps head = randomHead(4, 4);
  KernelSettings s;
  s.skip = 1;
  EXPECT_FALSE(ropeBands(head, projectHead(head, means, means).projections(), s, false));
}

}  // namespace
}  // namespace posgeom::testing
