#include "posgeom/positions/head_positions.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace posgeom::positions {

namespace {

// transformers' _relative_position_bucket for relative position i - n = -distance.
int64_t t5Bucket(int64_t distance, int64_t buckets, int64_t max_distance, bool bidirectional) {
  int64_t offset = 0;
  int64_t far = 0;  // how far the key lies on its side
  if (bidirectional) {
    buckets /= 2;
    if (distance < 0) offset = buckets;  // a key after the query
    far = distance < 0 ? -distance : distance;
  } else {
    far = std::max<int64_t>(distance, 0);
  }
  const int64_t exact = buckets / 2;
  if (far < exact) return offset + far;
  // float32 throughout, as transformers: relative_position.float() / max_exact, its log,
  // over log(max_distance / max_exact) (a double, rounded to float32 by the op).
  const float ratio = static_cast<float>(far) / static_cast<float>(exact);
  const float span = static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(exact)));
  const float scaled = std::log(ratio) / span * static_cast<float>(buckets - exact);
  return offset + std::min<int64_t>(exact + static_cast<int64_t>(scaled), buckets - 1);
}

}  // namespace

int64_t RelativeBiasTable::bucket(int64_t distance) const {
  if (rule == Rule::kT5Log) return t5Bucket(distance, static_cast<int64_t>(values.size()), max_distance, bidirectional);
  return std::clamp(distance, -max_distance, max_distance) + max_distance;
}

RelativeBiasTable t5BiasTable(std::vector<double> values, int64_t max_distance, bool bidirectional) {
  RelativeBiasTable t;
  t.values = std::move(values);
  t.max_distance = max_distance;
  t.rule = RelativeBiasTable::Rule::kT5Log;
  t.bidirectional = bidirectional;
  return t;
}

double AdditiveTerm::at(int64_t distance) const {
  switch (kind) {
    case Kind::kNone: return 0;
    case Kind::kAlibi: return -slope * static_cast<double>(distance);
    case Kind::kRelativeTable: return table.values.at(static_cast<size_t>(table.bucket(distance)));
  }
  return 0;
}

AdditiveTerm alibiTerm(double slope) {
  AdditiveTerm t;
  t.kind = AdditiveTerm::Kind::kAlibi;
  t.slope = slope;
  return t;
}

AdditiveTerm relativeBiasTerm(RelativeBiasTable table) {
  AdditiveTerm t;
  t.kind = AdditiveTerm::Kind::kRelativeTable;
  t.table = std::move(table);
  return t;
}

const AdditiveTerm& BlockPositions::additive(int64_t h) const {
  return per_head.empty() ? shared.additive : per_head.at(static_cast<size_t>(h));
}

HeadPositions BlockPositions::head(int64_t h) const {
  HeadPositions p = shared;
  p.additive = additive(h);
  if (!sinks.empty()) p.sink = sinks.at(static_cast<size_t>(h));
  if (!relative_vectors.empty()) p.relative_vectors = relative_vectors.at(static_cast<size_t>(h));
  return p;
}

int64_t DisentangledRows::bucket(int64_t distance) const {
  if (buckets <= 0 || max_position <= 0) return distance;
  const int64_t mid = buckets / 2;
  const int64_t far = distance < 0 ? -distance : distance;
  if (far <= mid) return distance;
  // float32 throughout, as transformers: ceil(log(|d| / mid) / log((max_position - 1) / mid) x
  // (mid - 1)) + mid, with the sign of d.
  const float ratio = static_cast<float>(far) / static_cast<float>(mid);
  const auto range = static_cast<float>(std::log(static_cast<float>(static_cast<double>(max_position - 1) / static_cast<double>(mid))));
  const float log_position = std::ceil(std::log(ratio) / range * static_cast<float>(mid - 1)) + static_cast<float>(mid);
  return (distance < 0 ? -1 : 1) * static_cast<int64_t>(log_position);
}

int64_t DisentangledRows::c2pRow(int64_t n, int64_t i) const { return std::clamp<int64_t>(bucket(n - i) + span, 0, 2 * span - 1); }
int64_t DisentangledRows::p2cRow(int64_t n, int64_t i) const { return std::clamp<int64_t>(span - bucket(i - n), 0, 2 * span - 1); }

DisentangledRows::Tables DisentangledRows::tables(int64_t positions) const {
  // bucket(d) for d = -(T - 1) .. T - 1, once each.
  std::vector<int64_t> by_distance(static_cast<std::size_t>(std::max<int64_t>(0, 2 * positions - 1)));
  for (int64_t d = 1 - positions; d < positions; ++d) by_distance[static_cast<std::size_t>(d + positions - 1)] = bucket(d);
  auto at = [&](int64_t d) { return by_distance[static_cast<std::size_t>(d + positions - 1)]; };
  Tables t;
  t.c2p.resize(static_cast<std::size_t>(positions * positions));
  t.p2c.resize(t.c2p.size());
  for (int64_t n = 0; n < positions; ++n)
    for (int64_t i = 0; i < positions; ++i) {
      t.c2p[static_cast<std::size_t>(n * positions + i)] = static_cast<int32_t>(std::clamp<int64_t>(at(n - i) + span, 0, 2 * span - 1));
      t.p2c[static_cast<std::size_t>(n * positions + i)] = static_cast<int32_t>(std::clamp<int64_t>(span - at(i - n), 0, 2 * span - 1));
    }
  return t;
}

bool BlockPositions::hasAdditive() const {
  return !shared.additive.none() ||
         std::any_of(per_head.begin(), per_head.end(), [](const AdditiveTerm& t) { return !t.none(); });
}

}  // namespace posgeom::positions
