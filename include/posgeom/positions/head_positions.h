#pragma once
// What position adds to an attention head's logit, as one vocabulary for the forward
// (model/ops) and the heads analysis (heads/): the mask, the logit scale and soft cap,
// RoPE's angles, and an additive term by the distance n - i of query n and key i.
// Torch-free and Eigen-free: a leaf below both.
#include <cstdint>
#include <optional>
#include <vector>

namespace posgeom::positions {

struct Mask {
  bool causal = true;  // keys i <= n; false: every key (BERT)
  // > 0: a sliding window, keys i > n - window (and, not causal, i < n + window as well:
  // ModernBERT's local blocks see |n - i| <= local_attention / 2, a window of that + 1)
  int64_t window = 0;
};

// RoPE: q turned at n and k at i by angle position x inverse_frequencies[j] for pair j.
enum class RopePairing {
  kRotateHalf,   // Hugging Face's rotate_half: pairs (j, j + F) over the first 2F dims
  kInterleaved,  // GPT-J's rotate_every_two: pairs (2j, 2j + 1)
};
struct Rope {
  std::vector<double> inverse_frequencies;  // one per turning pair; empty: no rotation
  RopePairing pairing = RopePairing::kRotateHalf;
  double scale = 1.0;  // cos and sin multiplied by it (YaRN's attention_factor)
  bool interleaved() const { return pairing == RopePairing::kInterleaved; }
};

// A learned bias per bucket of the signed distance d = n - i, by one of two rules.
// kClamped: bucket(d) = clamp(d, -max_distance, max_distance) + max_distance, so `values`
// holds 2 max_distance + 1 biases from d = -max_distance up.
// kT5Log: T5's buckets over values.size() buckets, as transformers' _relative_position_bucket
// computes them: bidirectional, keys after the query take the upper half of the buckets; in
// each half (or all of them, causal), the first half of the buckets one distance each, the
// rest logarithmically wider up to max_distance, beyond which the last bucket holds (the
// logarithm in float32, as transformers takes it, so that a distance on a boundary falls
// where it does there).
struct RelativeBiasTable {
  enum class Rule { kClamped, kT5Log };
  std::vector<double> values;
  int64_t max_distance = 0;
  Rule rule = Rule::kClamped;
  bool bidirectional = true;  // kT5Log: keys after the query have buckets of their own
  int64_t bucket(int64_t distance) const;
};
// T5's table of `values.size()` buckets.
RelativeBiasTable t5BiasTable(std::vector<double> values, int64_t max_distance, bool bidirectional);

// What a head adds to its logits after scale and cap: nothing, ALiBi's -slope (n - i), or
// a relative-bias table's value for n - i.
struct AdditiveTerm {
  enum class Kind { kNone, kAlibi, kRelativeTable };
  Kind kind = Kind::kNone;
  double slope = 0;         // kAlibi
  RelativeBiasTable table;  // kRelativeTable
  bool none() const { return kind == Kind::kNone; }
  // The term for distance n - i: the one place that reads the kind.
  double at(int64_t distance) const;
};
AdditiveTerm alibiTerm(double slope);
AdditiveTerm relativeBiasTerm(RelativeBiasTable table);

// DeBERTa's relative positions: the distance n - i in log buckets (with `buckets` and
// `max_position` > 0, as transformers' make_log_bucket_position computes them, in float32;
// else as it is), and the rows of the 2 span relative embeddings that its two disentangled
// terms read for query n and key i: c2p's clamp(bucket(n - i) + span), p2c's
// clamp(span - bucket(i - n)), each within 0 .. 2 span - 1.
struct DisentangledRows {
  int64_t span = 0;
  int64_t buckets = 0;
  int64_t max_position = 0;
  int64_t bucket(int64_t distance) const;
  int64_t c2pRow(int64_t n, int64_t i) const;
  int64_t p2cRow(int64_t n, int64_t i) const;
  // Both rows for every query n and key i of a window of T, [n * T + i] (each bucket taken
  // once a distance): what the forward gathers by and the heads analysis reads.
  struct Tables {
    std::vector<int32_t> c2p, p2c;
  };
  Tables tables(int64_t positions) const;
};

// One head's disentangled terms (DeBERTa): beside q_n . k_i, the query against the key
// vector of their relative position (c2p: q_n . keys[c2pRow(n, i)]) and the key against the
// query vector of it (p2c: k_i . queries[p2cRow(n, i)]), in the logit's scale. Each table
// [2 span x dims] row-major; empty: that term is absent.
struct RelativeVectors {
  DisentangledRows rows;
  int64_t dims = 0;
  std::vector<double> keys, queries;
};

// Everything one head's logit takes from position beyond its inputs.
struct HeadPositions {
  Mask mask;
  double scale = 0;      // logit scale; 0: 1/sqrt(dh)
  double logit_cap = 0;  // > 0: scaled logits become cap tanh(logit / cap) (Gemma-2), before the additive term
  Rope rope;
  AdditiveTerm additive;
  // gpt-oss: a learned logit every softmax holds beside the keys' (an attention sink): it
  // takes weight and gives no value, so the weights on keys sum to less than one. None: no sink.
  std::optional<double> sink;
  std::optional<RelativeVectors> relative_vectors;  // DeBERTa's c2p and p2c
};

// A block's heads: what they share, and where the additive term differs per query head
// (ALiBi's slopes), each head's term.
struct BlockPositions {
  HeadPositions shared;
  std::vector<AdditiveTerm> per_head;  // per query head; empty: every head takes shared.additive
  std::vector<double> sinks;           // per query head, each one's sink logit; empty: none
  std::vector<RelativeVectors> relative_vectors;  // per query head (DeBERTa); empty: none
  const AdditiveTerm& additive(int64_t h) const;
  HeadPositions head(int64_t h) const;
  bool hasAdditive() const;  // some head adds a term
};

}  // namespace posgeom::positions
