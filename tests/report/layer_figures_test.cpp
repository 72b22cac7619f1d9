#include "posgeom/report/layer_figures.h"

#include "anova_fixtures.h"
#include "report_samples.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

TEST(LayerFigures, OnePanelPerLayerWithACaption) {
  const auto layers = sampleLayers(3, 40, 8);
  for (const auto& [figure, id] : std::vector<std::pair<std::string, std::string>>{
           {report::gramFigure(layers), "fig-gram"},
           {report::combinedGramFigure(layers), "fig-combined-gram"},
           {report::spiralFigure(layers), "fig-spiral"},
           {report::singularValuesFigure(layers), "fig-singular-values"},
           {report::dctFigure(layers), "fig-dct"}}) {
    EXPECT_NE(figure.find("<figure id=\"" + id + "\""), std::string::npos);
    EXPECT_EQ(count(figure, "<svg"), 3u) << id;
    EXPECT_NE(figure.find(", layer 2</title>"), std::string::npos) << id;
    EXPECT_GT(figure.find("</figcaption>") - figure.find("<figcaption>"), 60u) << id;  // a real sentence
  }
  // Spiral points are coloured by position and the context cloud sits behind them.
  const auto spiral = report::spiralFigure(layers);
  const auto first_panel = spiral.substr(0, spiral.find("</svg>"));
  EXPECT_LT(first_panel.find("fill=\"#9a9a9a\" d=\"M"), first_panel.find("fill=\"#440154\""));
}

// Issue 36: a panel per layer with magnitude statistics, its three largest dimensions, the
// median and the cut; the caption names the massive ones; nothing without them.
TEST(LayerFigures, MassiveActivationsDrawEachLayersLargestDimensions) {
  auto h = randomSequences(8, 12, 5, 9);
  for (auto& x : h) x(2, 3) = -300;
  metrics::LayerMetricsOptions o;
  o.screenot_k = 1;
  std::vector<metrics::LayerMetrics> layers{metrics::computeLayerMetrics(directStatisticsWithMagnitudes(h, 1, 4), o),
                                            metrics::computeLayerMetrics(directStatisticsWithMagnitudes(randomSequences(8, 12, 5, 10), 1, 5), o)};
  const auto figure = report::massiveActivationsFigure(layers);
  EXPECT_NE(figure.find("<figure id=\"fig-massive-activations\""), std::string::npos);
  EXPECT_EQ(count(figure, "<svg"), 2u);
  EXPECT_NE(figure.find(", layer 5</title>"), std::string::npos);
  EXPECT_NE(figure.find("dim 3"), std::string::npos);
  EXPECT_NE(figure.find("100x median"), std::string::npos);
  EXPECT_NE(figure.find("Massive here (layer:dim@position): 4:3@2."), std::string::npos) << figure.substr(figure.find("<figcaption>"));
  EXPECT_EQ(report::massiveActivationsFigure(sampleLayers(2, 20, 6)), "");
  // Massive dimensions beyond the reported top ones are counted, not dropped from the caption.
  auto many = randomSequences(8, 12, 12, 11);
  for (auto& x : many)
    for (int i = 0; i < 10; ++i) x(1, i) = 200 + i;
  const auto crowded = report::massiveActivationsFigure({metrics::computeLayerMetrics(directStatisticsWithMagnitudes(many, 1, 2), o)});
  EXPECT_NE(crowded.find("2:9@1, 2:8@1, 2:7@1, 2:6@1, 2:5@1, 2:4@1, 2:3@1, 2:2@1 and 2 more in layer 2."), std::string::npos)
      << crowded.substr(crowded.find("<figcaption>"));
}

TEST(LayerFigures, AcrossLayersPlotsEveryLayer) {
  const auto layers = sampleLayers(4, 20, 6);
  const report::RunSummary summary(sampleSummary(layers, {}));
  const auto norms = report::normsFigure(summary);
  EXPECT_EQ(count(norms, "<circle"), 4u);  // a marker per layer
  EXPECT_EQ(count(report::similarityFigure(summary), "<circle"), 3u + 3u);  // 3 basis pairs, 3 previous-layer cosines
  EXPECT_NE(report::ranksFigure(summary).find("ScreeNOT"), std::string::npos);
  EXPECT_EQ(report::layerCosinesFigure(layers), "");  // not measured (not --corpus random)
  auto measured = layers;
  for (auto& m : measured) m.earlier_cosines = Eigen::VectorXd::Constant(m.layer, 0.5);
  const auto cosines = report::layerCosinesFigure(measured);
  EXPECT_NE(cosines.find("id=\"fig-layer-cosines\""), std::string::npos);
  EXPECT_EQ(count(cosines, "<svg"), 1u);
  EXPECT_NE(cosines.find("hidden states 0, 1, 2, 3."), std::string::npos) << cosines;
}

}  // namespace
}  // namespace posgeom::testing
