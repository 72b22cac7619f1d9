#include "posgeom/anova/state_layers.h"

namespace posgeom::anova {

StateLayers::StateLayers(const std::vector<LayerStatistics>& layers) : memory_(&layers) {
  for (const auto& l : layers) shapes_.push_back(shapeOf(l));
}

StateLayers::StateLayers(const AnalysisState& state) : StateLayers(state.layers) {}

StateLayers::StateLayers(std::shared_ptr<const StateReader> file) : file_(std::move(file)) {
  for (std::size_t i = 0; i < file_->layerCount(); ++i) shapes_.push_back(file_->layerShape(i));
}

std::size_t StateLayers::size() const { return shapes_.size(); }

std::shared_ptr<const LayerStatistics> StateLayers::at(std::size_t i) const {
  if (memory_) return std::shared_ptr<const LayerStatistics>(std::shared_ptr<void>(), &memory_->at(i));  // not owned
  return std::make_shared<const LayerStatistics>(file_->layer(i));
}

std::optional<std::size_t> StateLayers::find(int64_t layer) const {
  for (std::size_t i = 0; i < shapes_.size(); ++i)
    if (shapes_[i].layer == layer) return i;
  return std::nullopt;
}

}  // namespace posgeom::anova
