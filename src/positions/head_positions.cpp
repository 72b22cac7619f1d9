#include "posgeom/positions/head_positions.h"

#include <algorithm>
#include <utility>

namespace posgeom::positions {

int64_t RelativeBiasTable::bucket(int64_t distance) const {
  return std::clamp(distance, -max_distance, max_distance) + max_distance;
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
  return p;
}

bool BlockPositions::hasAdditive() const {
  return !shared.additive.none() ||
         std::any_of(per_head.begin(), per_head.end(), [](const AdditiveTerm& t) { return !t.none(); });
}

}  // namespace posgeom::positions
