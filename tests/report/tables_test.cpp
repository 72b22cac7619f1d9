#include "posgeom/report/tables.h"

#include "anova_fixtures.h"
#include "report_samples.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Two layers of 10 windows of 9 positions (8 after skip_first = 1), width 6.
std::vector<metrics::LayerMetrics> twoLayerMetrics() {
  metrics::LayerMetricsOptions o;
  o.screenot_k = 2;  // d = 6 leaves room for 2k+1 < 6
  return {metrics::computeLayerMetrics(directStatistics(randomSequences(10, 9, 6, 1), 1, 0), o),
          metrics::computeLayerMetrics(directStatistics(randomSequences(10, 9, 6, 2), 1, 1), o)};
}

TEST(Tables, SummaryHasTheDesignKeysAndCsvFilesParse) {
  ScratchDir s;
  const auto layers = twoLayerMetrics();
  const auto summary = report::summaryJson({{"model", "m"}}, layers, {metrics::compareLayers(layers[0], layers[1])});
  for (const char* key : {"layer", "screenot_rank", "stable_rank", "explained_ratio", "relative_norm", "lowfreq_energy",
                          "incoherence_max"})
    EXPECT_TRUE(summary["layers"][0].contains(key)) << key;
  EXPECT_EQ(summary["model"], "m");
  EXPECT_EQ(summary["cross_layer"].size(), 1u);
  // The even/odd labels of the fixture give label cosines; their mean and spread over layers:
  const double b0 = layers[0].label_cosines->between, b1 = layers[1].label_cosines->between;
  EXPECT_NEAR(summary["context_similarity"]["b_mean"].get<double>(), (b0 + b1) / 2, 1e-15);
  EXPECT_NEAR(summary["context_similarity"]["b_std"].get<double>(), std::abs(b0 - b1) / 2, 1e-15);
  EXPECT_NEAR(summary["context_similarity"]["w_mean"].get<double>(),
              (layers[0].label_cosines->within + layers[1].label_cosines->within) / 2, 1e-15);
  report::writeTables(s.path(), summary, layers);
  for (const char* f : {"summary.json", "report.html", "layers.csv", "pos_L1.csv", "gram_L0.csv", "gram_dct_L0.csv", "spiral_L1.csv",
                        "singular_values_L0.csv", "power_spectrum_L1.csv"})
    EXPECT_TRUE(std::filesystem::exists(s / f)) << f;
  const auto csv = readFile(s / "layers.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  const auto gram = readFile(s / "gram_L0.csv");
  EXPECT_EQ(std::count(gram.begin(), gram.end(), '\n'), 1 + 8);  // the header, then 8 positions
  for (const auto& e : std::filesystem::directory_iterator(s.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "left a temporary file";
}

// Issue 36: each layer's massive activations in summary.json, as massive_activations.csv
// rows (a row per layer and top dimension) and in report.html.
TEST(Tables, MassiveActivationsAreInTheSummaryTheirCsvAndThePage) {
  ScratchDir s;
  auto h = randomSequences(10, 9, 6, 3);
  for (auto& x : h) x(0, 5) = 500;  // every window's position 0, dimension 5
  metrics::LayerMetricsOptions o;
  o.screenot_k = 2;
  const std::vector<metrics::LayerMetrics> layers{metrics::computeLayerMetrics(directStatisticsWithMagnitudes(h, 1, 0), o),
                                                   metrics::computeLayerMetrics(directStatisticsWithMagnitudes(randomSequences(10, 9, 6, 4), 1, 1), o)};
  const auto summary = report::summaryJson({{"model", "m"}}, layers, {});
  const auto& m = summary["layers"][0]["massive_activations"];
  EXPECT_EQ(m["massive_dimensions"], 1);
  EXPECT_EQ(m["named_above"], metrics::kMassiveTimesMedian);
  EXPECT_EQ(m["top"][0]["dim"], 5);
  EXPECT_EQ(m["top"][0]["max_abs"], 500);
  EXPECT_EQ(m["top"][0]["position"], 0);
  EXPECT_EQ(m["top"][0]["window"], 0);  // the first of the equal ones
  EXPECT_EQ(m["top"][0]["token_id"], 7);
  EXPECT_EQ(m["top"][0]["positions"], nlohmann::json::array({0}));
  EXPECT_EQ(m["top"].size(), 6u);
  EXPECT_EQ(m["position_0"]["massive_share"], layers[0].massive->position0_massive_share);
  EXPECT_EQ(m["variance_shares"]["without_position_0"]["position"], layers[0].massive->without_position_0.position);
  EXPECT_EQ(summary["layers"][1]["massive_activations"]["massive_dimensions"], 0);
  report::writeTables(s.path(), summary, layers);
  const auto csv = readFile(s / "massive_activations.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 6);  // the header, 6 dimensions of 2 layers
  EXPECT_EQ(csv.rfind("layer,dim,max_abs,times_median,massive,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\n0,5,500,"), std::string::npos) << csv;
  const auto page = readFile(s / "report.html");
  EXPECT_NE(page.find("<figure id=\"fig-massive-activations\""), std::string::npos);
  EXPECT_NE(page.find("Massive here (layer:dim@position): 0:5@0."), std::string::npos);
  EXPECT_NE(page.find("<section id=\"massive\">"), std::string::npos);
  EXPECT_NE(page.find("<a href=\"#massive\">"), std::string::npos);
}

// Statistics without magnitudes (a state written before them): no section, no CSV.
TEST(Tables, AStateWithoutMagnitudesHasNoMassiveActivations) {
  ScratchDir s;
  const auto layers = twoLayerMetrics();
  const auto summary = report::summaryJson({{"model", "m"}}, layers, {});
  EXPECT_FALSE(summary["layers"][0].contains("massive_activations"));
  report::writeTables(s.path(), summary, layers);
  EXPECT_FALSE(std::filesystem::exists(s / "massive_activations.csv"));
  const auto page = readFile(s / "report.html");
  EXPECT_EQ(page.find("fig-massive-activations"), std::string::npos);
  EXPECT_EQ(page.find("#massive"), std::string::npos);  // no link to a section that is not there
}

// The induction probe's summary: the heads above the bar, highest first, by block.head.
TEST(Tables, ProbeNamesTheHeadsAboveTheBar) {
  std::vector<heads::HeadReport> hs(4);
  const double induction[4] = {0.5, 0.2, 0.9, 0.41}, previous[4] = {0.1, 0.95, 0.0, 0.3};
  for (int i = 0; i < 4; ++i) {
    hs[static_cast<std::size_t>(i)].block = i / 2, hs[static_cast<std::size_t>(i)].head = i % 2;
    hs[static_cast<std::size_t>(i)].induction_score = induction[i];
    hs[static_cast<std::size_t>(i)].previous_token_score = previous[i];
  }
  const auto summary = report::summaryJson({{"head_options", {{"repeat_period", 8}}}}, {}, {}, hs);
  const auto& probe = summary["probe"];
  EXPECT_EQ(probe["repeat_period"], 8);
  ASSERT_EQ(probe["induction_heads"].size(), 3u);
  EXPECT_EQ(probe["induction_heads"][0]["head"], "1.0");
  EXPECT_EQ(probe["induction_heads"][1]["head"], "0.0");
  EXPECT_EQ(probe["induction_heads"][2]["head"], "1.1");
  EXPECT_DOUBLE_EQ(probe["induction_heads"][2]["score"].get<double>(), 0.41);
  ASSERT_EQ(probe["previous_token_heads"].size(), 1u);
  EXPECT_EQ(probe["previous_token_heads"][0]["head"], "0.1");
  EXPECT_EQ(summary["heads"][1]["previous_token_score"], 0.95);
  hs[0].induction_score = std::nan("");  // not a probe run
  EXPECT_FALSE(report::summaryJson({}, {}, {}, hs).contains("probe"));
}

// Issue 36's sink heads: per block, every block listed, the heads above 0.5 in order.
TEST(Tables, SinkHeadsArePerBlockAboveTheBar) {
  std::vector<heads::HeadReport> hs(6);
  const double share[6] = {0.9, 0.5, 0.51, 0.1, 0.0, 0.2};
  for (int i = 0; i < 6; ++i) {
    auto& h = hs[static_cast<std::size_t>(i)];
    h.block = i / 3, h.head = i % 3, h.sink_share = share[i], h.self_share = 0.25, h.first_keys_share = 0.95;
  }
  const auto summary = report::summaryJson({}, {}, {}, hs);
  const auto& sinks = summary["sink_heads"];
  EXPECT_EQ(sinks["named_above"], 0.5);
  ASSERT_EQ(sinks["blocks"].size(), 2u);
  EXPECT_EQ(sinks["blocks"][0]["block"], 0);
  EXPECT_EQ(sinks["blocks"][0]["heads"], nlohmann::json({0, 2}));  // 0.5 itself is not above
  EXPECT_EQ(sinks["blocks"][1]["heads"], nlohmann::json::array());
  EXPECT_EQ(summary["heads"][0]["self_share"], 0.25);
  EXPECT_EQ(summary["heads"][0]["first_keys_share"], 0.95);
  EXPECT_TRUE(summary["heads"][0]["learned_sink_share"].is_null());
  hs[0].sink_share = std::nan("");  // no sampled windows
  EXPECT_FALSE(report::summaryJson({}, {}, {}, hs).contains("sink_heads"));
}

// --corpus random: the mean cosine between every pair of layers in summary.json and
// layer_cosines.csv; neither for runs that did not measure it.
TEST(Tables, LayerCosinesAreAMatrixInTheSummaryAndACsv) {
  ScratchDir s;
  auto layers = twoLayerMetrics();
  EXPECT_FALSE(report::summaryJson({{"model", "m"}}, layers, {}).contains("layer_cosine_matrix"));
  layers[0].earlier_cosines = Eigen::VectorXd(layers[0].layer);
  layers[1].earlier_cosines = Eigen::VectorXd::Constant(layers[1].layer, 0.75);
  const auto summary = report::summaryJson({{"model", "m"}}, layers, {});
  EXPECT_EQ(summary["layer_cosine_matrix"]["layers"], nlohmann::json({0, 1}));
  EXPECT_EQ(summary["layer_cosine_matrix"]["cosine"], nlohmann::json({{1.0, 0.75}, {0.75, 1.0}}));
  report::writeTables(s.path(), summary, layers);
  EXPECT_EQ(readFile(s / "layer_cosines.csv"), "layer,hidden.0,hidden.1\nhidden.0,1,0.75\nhidden.1,0.75,1\n");
}

// RoPE heads: their bands in each head's entry, the layout once, and rope_bands.csv; none of
// it for heads that do not turn.
TEST(Tables, RopeBandsAreInTheSummaryAndTheirCsv) {
  ScratchDir s;
  const auto layers = twoLayerMetrics();
  auto heads = sampleHeads(2, 3, 9, 0);
  const auto plain = report::summaryJson({{"model", "m"}}, layers, {}, heads);
  EXPECT_FALSE(plain.contains("rope_band_layout"));
  EXPECT_TRUE(plain["heads"][0]["rope_bands"].is_null());
  std::filesystem::create_directories(s / "plain");
  report::writeTables(s / "plain", plain, layers, heads);
  EXPECT_FALSE(std::filesystem::exists(s / "plain" / "rope_bands.csv"));
  addRopeBands(heads, 4, 0);
  const auto summary = report::summaryJson({{"model", "m"}}, layers, {}, heads);
  EXPECT_EQ(summary["rope_band_layout"].size(), 1u);
  EXPECT_EQ(summary["heads"][2]["rope_bands"]["kernel_share"], nlohmann::json({0.0, 0.0, 1.0, 0.0}));
  std::filesystem::create_directories(s / "rope");
  report::writeTables(s / "rope", summary, layers, heads);
  const auto csv = readFile(s / "rope" / "rope_bands.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "block,head,band,first_pair,pairs,dims,shortest_wavelength,longest_wavelength,kernel_share,attention_share");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 13);  // the header and 3 heads x 4 bands
  EXPECT_NE(csv.find("\n0,2,2,2,1,2,"), std::string::npos) << csv;  // head 2's band 2: pair 2
}

TEST(Tables, MatrixCsvKeepsFullPrecisionWithHeaderIndexAndEmptyPadding) {
  Eigen::MatrixXd m(2, 2);
  m << 0.1, 1.0 / 3.0, 2, std::nan("");
  EXPECT_EQ(report::matrixCsv(m, {"position", {"1", "2"}, {"a", "b"}}),
            "position,a,b\n1,0.1,0.3333333333333333\n2,2,\n");
  EXPECT_EQ(report::csvLabels("p", 3, 2), (std::vector<std::string>{"p3", "p4"}));
}

// The matrices are labelled with what their rows and columns are: the real positions
// after skip_first (row 0 of pos_L*.csv is position skip_first), components from 1.
TEST(Tables, MatrixCsvsNameTheirRowsAndColumns) {
  ScratchDir s;
  const auto layers = twoLayerMetrics();
  auto summary = report::summaryJson({{"skip_first", 1}}, layers, {}, {});
  report::writeTables(s.path(), summary, layers);
  const auto pos = readFile(s / "pos_L0.csv");
  EXPECT_EQ(pos.substr(0, pos.find('\n')), "position,d0,d1,d2,d3,d4,d5");
  EXPECT_EQ(pos.substr(pos.find('\n') + 1, 2), "1,");
  const auto gram = readFile(s / "gram_L0.csv");
  EXPECT_EQ(gram.substr(0, gram.find(",p2")), "position,p1");
  const auto sv = readFile(s / "singular_values_L0.csv");
  EXPECT_EQ(sv.substr(0, sv.find('\n')), "component,pos,cvec,resid");
  EXPECT_EQ(sv.find("nan"), std::string::npos);
  EXPECT_EQ(readFile(s / "power_spectrum_L0.csv").substr(0, 16), "frequency,power\n");
  EXPECT_EQ(readFile(s / "spiral_L0.csv").substr(0, 19), "position,pc1,pc2\n1,");
  // The numbers as they were (the shortest text that reads back the same double).
  const auto row1 = pos.substr(pos.find('\n') + 1);
  EXPECT_EQ(std::stod(row1.substr(2, row1.find(',', 2) - 2)), layers[0].positional(0, 0));
}

}  // namespace
}  // namespace posgeom::testing
