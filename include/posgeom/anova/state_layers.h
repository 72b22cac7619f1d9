#pragma once
// A state's layers as the end stages read them (metrics, heads, neurons): a run's own held
// in memory, or a state file's read one at a time as each is needed, so that a run whose
// statistics never were all in memory (layer-major, one wave) never holds them all at its
// end either. Torch-free.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "posgeom/anova/layer_statistics.h"
#include "posgeom/anova/state_file.h"

namespace posgeom::anova {

class StateLayers {
 public:
  // Referred to, not copied: they must outlive this.
  StateLayers(const std::vector<LayerStatistics>& layers);  // NOLINT: a state's layers are its layers
  StateLayers(const AnalysisState& state);                   // NOLINT
  explicit StateLayers(std::shared_ptr<const StateReader> file);

  std::size_t size() const;
  bool empty() const { return size() == 0; }
  // The hidden-state index of layer i, and its shape, without reading it.
  int64_t index(std::size_t i) const { return shape(i).layer; }
  const LayerShape& shape(std::size_t i) const { return shapes_.at(i); }
  // Layer i: the one in memory, or read from the file (and let go when the last holder drops it).
  std::shared_ptr<const LayerStatistics> at(std::size_t i) const;
  // The position of hidden state `layer` among them, if it is one.
  std::optional<std::size_t> find(int64_t layer) const;

 private:
  const std::vector<LayerStatistics>* memory_ = nullptr;
  std::shared_ptr<const StateReader> file_;
  std::vector<LayerShape> shapes_;
};

}  // namespace posgeom::anova
