#include "posgeom/report/head_figures.h"

#include "report_samples.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(HeadFigures, EtcMapKernelsAndQkMaps) {
  const auto heads = sampleHeads(4, 5, 30, 1);  // blocks 0..2
  const auto etc = report::etcMapFigure(heads);
  EXPECT_NE(etc.find("id=\"fig-etc\""), std::string::npos);
  EXPECT_NE(etc.find("sqrt(ETC)"), std::string::npos);
  const auto kernels = report::kernelProfilesFigure(heads);
  std::size_t panels = 0, lines = 0;
  for (std::size_t at = 0; (at = kernels.find("<svg", at)) != std::string::npos; ++at) ++panels;
  for (std::size_t at = 0; (at = kernels.find("<polyline", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(panels, 3u);  // one small-multiples panel per block
  EXPECT_EQ(lines, 15u);  // one curve per head
  const auto qk = report::qkMapsFigure(heads);
  std::size_t maps = 0;
  for (std::size_t at = 0; (at = qk.find("<svg", at)) != std::string::npos; ++at) ++maps;
  EXPECT_EQ(maps, 6u);
  EXPECT_NE(qk.find("L0H0 cvec_pos"), std::string::npos);
  EXPECT_EQ(report::qkMapsFigure(sampleHeads(3, 2, 10, 0)), "");  // none asked for
  const auto basis = report::qkBasisFigure(heads);
  std::size_t basis_panels = 0;
  for (std::size_t at = 0; (at = basis.find("<svg", at)) != std::string::npos; ++at) ++basis_panels;
  EXPECT_EQ(basis_panels, 2u);
  EXPECT_NE(basis.find("id=\"fig-qk-basis\""), std::string::npos);
  EXPECT_NE(basis.find("L0H0 rest, positional basis"), std::string::npos);
  EXPECT_EQ(report::qkBasisFigure(sampleHeads(3, 2, 10, 0)), "");
  const auto probe = report::probeFigures(heads);
  EXPECT_NE(probe.find("id=\"fig-induction\""), std::string::npos);
  EXPECT_NE(probe.find("Above 0.4: 1.1, 2.1."), std::string::npos);  // head 1 of blocks 1 and 2
  EXPECT_NE(probe.find("id=\"fig-previous-token\""), std::string::npos);
  EXPECT_NE(probe.find("Above 0.4: 0.2."), std::string::npos);
  EXPECT_EQ(report::sinkShareFigure(heads), "");  // no sampled sequences' shares
  EXPECT_EQ(report::learnedSinkShareFigure(heads), "");  // no learned sinks
  auto sunk = heads;
  for (auto& h : sunk) h.sink_share = h.learned_sink_share = 0.15 * static_cast<double>(h.head);
  const auto sinks = report::sinkShareFigure(sunk);
  EXPECT_NE(sinks.find("id=\"fig-sink-share\""), std::string::npos);
  EXPECT_NE(sinks.find("<svg"), std::string::npos);
  EXPECT_NE(sinks.find("Above 0.5: 0.4, 1.4, 2.4."), std::string::npos) << sinks;  // head 4: 0.6
  EXPECT_NE(report::learnedSinkShareFigure(sunk).find("id=\"fig-learned-sink-share\""), std::string::npos);
  auto not_a_probe = heads;
  for (auto& h : not_a_probe) h.induction_score = h.previous_token_score = std::nan("");
  EXPECT_EQ(report::probeFigures(not_a_probe), "");
  EXPECT_EQ(report::etcMapFigure({}), "");
  const auto tv = report::kernelTvMapFigure(heads);
  EXPECT_NE(tv.find("id=\"fig-kernel-tv\""), std::string::npos);
  EXPECT_NE(tv.find("kernel_tv"), std::string::npos);
  EXPECT_EQ(report::kernelTvMapFigure({}), "");
  const auto kernel_maps = report::kernelMapsFigure(heads);
  std::size_t thumbs = 0;
  for (std::size_t at = 0; (at = kernel_maps.find("<svg", at)) != std::string::npos; ++at) ++thumbs;
  EXPECT_EQ(thumbs, 15u);  // one per head
  EXPECT_NE(kernel_maps.find("id=\"fig-kernel-maps\""), std::string::npos);
  EXPECT_NE(kernel_maps.find("L2H4"), std::string::npos);
  EXPECT_NE(report::kernelMapsFigure(sampleHeads(40, 5, 10, 0)).find("The first 64 of 195 heads"), std::string::npos);
}

// Per block, bands x heads of the kernel's shares and of the attention's, the kernels counted
// by where their mass lies.
TEST(HeadFigures, RopeBandsDrawBandsByHeadsPerBlock) {
  auto heads = sampleHeads(4, 5, 30, 0);  // blocks 0..2, heads 0..4
  EXPECT_EQ(report::ropeBandsFigure(heads), "");  // no rotary heads
  addRopeBands(heads, 4, 0);
  auto count = [](const std::string& html) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = html.find("<svg", at)) != std::string::npos; ++at) ++n;
    return n;
  };
  const auto figure = report::ropeBandsFigure(heads);
  EXPECT_NE(figure.find("id=\"fig-rope-bands\""), std::string::npos);
  EXPECT_EQ(count(figure), 6u);  // kernel and attention for each of 3 blocks
  EXPECT_NE(figure.find("block 2: attention"), std::string::npos);
  EXPECT_NE(figure.find("9 high, 6 low"), std::string::npos) << figure;  // heads 0, 1, 4 high; 2, 3 low
  EXPECT_EQ(figure.find("unturned"), std::string::npos);
  auto partial = sampleHeads(2, 5, 30, 0);
  addRopeBands(partial, 2, 4, false);  // bands 0, 1 and the unturned dims; no samples
  const auto without = report::ropeBandsFigure(partial);
  EXPECT_EQ(count(without), 1u);  // the kernel's only
  EXPECT_NE(without.find("2 bands of consecutive pairs"), std::string::npos) << without;
  EXPECT_NE(without.find("unturned in the last row"), std::string::npos);
  EXPECT_NE(without.find("1 unturned"), std::string::npos);  // head 2
}

}  // namespace
}  // namespace posgeom::testing
