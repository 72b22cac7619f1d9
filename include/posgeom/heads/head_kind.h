#pragma once
// A head's class by the ETC of its positional kernel, and its name in reports (summary.json's
// "class", heads.csv, batch's tables). A leaf header: the classifier and the report readers
// both speak it. Eigen-free.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace posgeom::heads {

enum class HeadKind { kLocal, kSlowDecay, kUniform };

// Every kind, in the order reports list them (local, slow-decay, uniform).
inline constexpr std::array<HeadKind, 3> kHeadKinds{HeadKind::kLocal, HeadKind::kSlowDecay, HeadKind::kUniform};

// "local", "slow-decay", "uniform": the names reports write.
inline std::string headKindName(HeadKind kind) {
  switch (kind) {
    case HeadKind::kLocal: return "local";
    case HeadKind::kSlowDecay: return "slow-decay";
    case HeadKind::kUniform: return "uniform";
  }
  return "";
}

// A name read back from a report; none for a name no kind has (counted as no class).
inline std::optional<HeadKind> parseHeadKind(std::string_view name) {
  for (const auto kind : kHeadKinds)
    if (headKindName(kind) == name) return kind;
  return std::nullopt;
}

}  // namespace posgeom::heads
