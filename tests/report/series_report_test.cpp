#include "posgeom/report/series_report.h"

#include "report_samples.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Three checkpoints whose block-0 heads turn local one by one, and whose layer-0 ScreeNOT
// rank grows: the page must carry each step's own numbers, in order.
std::vector<report::SeriesPoint> samplePoints() {
  const auto layers = sampleLayers(2, 16, 4);
  std::vector<report::SeriesPoint> points;
  for (int k = 0; k < 3; ++k) {
    auto heads = sampleHeads(2, 2, 16, 0);
    for (int h = 0; h < k && h < static_cast<int>(heads.size()); ++h) heads[static_cast<std::size_t>(h)].kind = heads::HeadKind::kLocal;
    for (int h = k; h < static_cast<int>(heads.size()); ++h) heads[static_cast<std::size_t>(h)].kind = heads::HeadKind::kUniform;
    auto summary = sampleSummary(layers, heads);
    summary["layers"][0]["screenot_rank"] = 10 + k;
    points.push_back({100 * (k + 1), report::RunSummary(summary), k == 0 ? std::optional<double>(2.5) : std::nullopt});
  }
  return points;
}

TEST(SeriesReport, DrawsEveryMetricAndTheHeadsByStep) {
  const auto points = samplePoints();
  const auto page = report::seriesReport("tiny on noise", points);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_NE(page.find("<title>posgeom over training: tiny on noise</title>"), std::string::npos);
  for (const char* id : {"fig-series-screenot_rank", "fig-series-stable_rank", "fig-series-lowfreq_energy", "fig-series-relative_norm",
                         "fig-series-etc", "fig-series-classes"})
    EXPECT_NE(page.find(std::string("<figure id=\"") + id + "\""), std::string::npos) << id;
  // The numbers table: one row per step in order, with its validation loss where known,
  // its heads by class (local / slow-decay / uniform) and its own layer-0 rank.
  const int n = static_cast<int>(points.front().summary.heads().size());
  ASSERT_GE(n, 2);
  auto classes = [&](int local) { return std::to_string(local) + "/0/" + std::to_string(n - local); };
  const auto row100 = page.find("<tr><td>100</td><td>2.5</td><td>" + classes(0) + "</td><td>10</td>");
  const auto row200 = page.find("<tr><td>200</td><td></td><td>" + classes(1) + "</td><td>11</td>");
  const auto row300 = page.find("<tr><td>300</td><td></td><td>" + classes(2) + "</td><td>12</td>");
  EXPECT_NE(row100, std::string::npos) << page.substr(0, 3000);
  EXPECT_LT(row100, row200);
  EXPECT_LT(row200, row300);
  EXPECT_NE(row300, std::string::npos);
}

TEST(SeriesReport, WithoutHeadsOrPointsSaysSoAndDrawsNoHeadFigure) {
  auto points = samplePoints();
  for (auto& p : points) {
    auto json = p.summary.json();
    json.erase("heads");
    p.summary = report::RunSummary(json);
  }
  const auto page = report::seriesReport("plain", points);
  EXPECT_NE(page.find("fig-series-lowfreq_energy"), std::string::npos);
  EXPECT_EQ(page.find("fig-series-etc"), std::string::npos);
  EXPECT_NE(report::seriesReport("none", {}).find("No checkpoint of the series has a report."), std::string::npos);
}

TEST(SeriesReport, CountsHeadsByClass) {
  const nlohmann::json summary = {{"heads", {{{"class", "local"}}, {{"class", "slow-decay"}}, {{"class", "local"}}, {{"class", "uniform"}}}}};
  const auto c = report::headClassCounts(report::RunSummary(summary));
  EXPECT_EQ(c.local, 2);
  EXPECT_EQ(c.slow_decay, 1);
  EXPECT_EQ(c.uniform, 1);
  EXPECT_EQ(report::headClassCounts(report::RunSummary(nlohmann::json::object())).local, 0);
}

}  // namespace
}  // namespace posgeom::testing
