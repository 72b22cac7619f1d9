#include "posgeom/report/html_report.h"

#include "posgeom/report/neuron_tables.h"

#include "browser.h"
#include <set>

#include "png_decode.h"
#include "report_samples.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

const std::vector<std::string> kLayerFigures{"fig-ranks", "fig-norms", "fig-similarity", "fig-gram", "fig-combined-gram",
                                             "fig-spiral", "fig-singular-values", "fig-dct"};
const std::vector<std::string> kHeadFigures{"fig-etc", "fig-kernel-tv", "fig-kernels", "fig-kernel-maps", "fig-qk",
                                            "fig-qk-basis", "fig-induction", "fig-previous-token"};

TEST(HtmlReport, SelfContainedWithIdentityTableAndEveryFigure) {
  const auto layers = sampleLayers(3, 24, 6);
  const auto heads = sampleHeads(3, 4, 24, 1);
  const auto page = report::htmlReport(sampleSummary(layers, heads), layers, heads);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  for (std::size_t at = 0; (at = page.find("http", at)) != std::string::npos; ++at)  // only the SVG namespace
    EXPECT_EQ(page.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << page.substr(at, 60);
  EXPECT_NE(page.find("<th>model</th><td>synthetic</td>"), std::string::npos);
  EXPECT_NE(page.find("<th>screenot_rank</th>"), std::string::npos);
  for (const auto& id : kLayerFigures) EXPECT_NE(page.find("<figure id=\"" + id + "\""), std::string::npos) << id;
  for (const auto& id : kHeadFigures) EXPECT_NE(page.find("<figure id=\"" + id + "\""), std::string::npos) << id;
  const auto without_heads = report::htmlReport(sampleSummary(layers, {}), layers, {});
  EXPECT_EQ(without_heads.find("fig-etc"), std::string::npos);
}

// Measures the rendered page from inside the browser and leaves the result in the DOM.
constexpr const char* kProbe = R"(<script>
window.addEventListener('load', () => {
  const w = window.innerWidth;
  const out = {scrollWidth: document.documentElement.scrollWidth, innerWidth: w, figures: {}};
  for (const f of document.querySelectorAll('figure')) {
    const svgs = [...f.querySelectorAll('svg')];
    out.figures[f.id] = {
      panels: svgs.length,
      empty: svgs.filter(s => { const r = s.getBoundingClientRect(); return !(r.width > 20 && r.height > 20); }).length,
      untitled: svgs.filter(s => !(s.querySelector('title') || {}).textContent).length,
      overflowing: svgs.filter(s => s.getBoundingClientRect().right > w + 0.5).length,
      caption: ((f.querySelector('figcaption') || {}).textContent || '').length};
  }
  out.neuronRows = document.querySelectorAll('#neuron-table tr').length;
  const neurons = document.querySelector('#neurons');
  out.neuronsHeight = neurons ? neurons.getBoundingClientRect().height : 0;
  const image = document.querySelector('#fig-gram image');
  if (image) { const r = image.getBoundingClientRect(); out.gram = [r.left, r.top + window.scrollY, r.width, r.height]; }
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>)";

nlohmann::json probe(const fs::path& page, int width) {
  std::string html = readFile(page);
  html.insert(html.rfind("</body>"), kProbe);
  const auto probed = page.parent_path() / ("probed-" + std::to_string(width) + ".html");
  writeFile(probed, html);
  const auto dom = dumpDom(probed, width, 900);
  const auto start = dom.find("<pre id=\"probe\">");
  if (start == std::string::npos) return nullptr;
  std::string text = dom.substr(start + 16, dom.find("</pre>", start) - start - 16);
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
    for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos;) text.replace(at, from.size(), to);
  return nlohmann::json::parse(text);
}

// Acceptance: a Llama-2-7B-sized report (33 hidden states, 32 x 32 heads) renders in a real
// browser with every figure present, titled, captioned, non-empty and inside the viewport.
TEST(HtmlReport, RendersInHeadlessChromiumAtLlamaScale) {
  POSGEOM_REQUIRE_CHROMIUM();
  ScratchDir s;
  const auto layers = sampleLayers(33, 256, 16);
  const auto heads = sampleHeads(33, 32, 256, 2);
  const auto page = s / "report.html";
  auto summary = sampleSummary(layers, heads);
  heads::NeuronAnalysis neurons;  // a GPT-2-sized table: 20 rows of 10 + 10 long token names
  neurons.contextual_heads = {1, 4, 7};
  neurons.groups = {{{1, 4}, 0.9}, {{7}, 1.0}};
  neurons.windows = 8;
  std::vector<std::string> names;
  for (int v = 0; v < 300; ++v) names.push_back("\u0120token_" + std::to_string(v) + (v % 7 == 0 ? "_with_a_long_tail" : ""));
  for (int j = 0; j < 3072; ++j) {
    heads::NeuronReport r{j, 3072.0 - j, 0.5, 0.6, {}, {}};
    for (int k = 0; k < 10; ++k) r.top_positive.emplace_back((j + k) % 300, 1.0 / (k + 1)), r.top_negative.emplace_back((j + 3 * k) % 300, -1.0);
    neurons.neurons.push_back(r);
  }
  summary["neurons"] = report::neuronsJson(neurons, names);
  writeFile(page, report::htmlReport(summary, layers, heads));
  EXPECT_LT(fs::file_size(page), 3u << 20) << "the page should load instantly";
  nlohmann::json box;
  for (int width : {1280, 800}) {
    const auto result = probe(page, width);
    if (width == 1280) box = result["gram"];
    ASSERT_TRUE(result.is_object()) << "no probe result at width " << width;
    EXPECT_LE(result["scrollWidth"].get<int>(), result["innerWidth"].get<int>()) << "horizontal overflow at " << width;
    for (const auto& ids : {kLayerFigures, kHeadFigures})
      for (const auto& id : ids) {
        ASSERT_TRUE(result["figures"].contains(id)) << id;
        const auto& f = result["figures"][id];
        EXPECT_GE(f["panels"].get<int>(), 1) << id;
        EXPECT_EQ(f["empty"], 0) << id;
        EXPECT_EQ(f["untitled"], 0) << id;
        EXPECT_EQ(f["overflowing"], 0) << id << " at " << width;
        EXPECT_GT(f["caption"].get<int>(), 60) << id;
      }
    EXPECT_EQ(result["figures"]["fig-gram"]["panels"], 33);
    EXPECT_EQ(result["figures"]["fig-kernels"]["panels"], 32);  // one panel of 32 heads per block 0..31
    EXPECT_EQ(result["figures"]["fig-qk"]["panels"], 12);
    EXPECT_EQ(result["figures"]["fig-qk-basis"]["panels"], 4);  // two a head
    EXPECT_EQ(result["figures"]["fig-kernel-maps"]["panels"], 64);  // the first 64 of 1024 heads
    EXPECT_EQ(result["neuronRows"], 21);  // the header and the top 20
    EXPECT_GT(result["neuronsHeight"].get<double>(), 200);
  }
  // The screenshot shows the first Gram heatmap drawn: many colours inside its box.
  const int top = static_cast<int>(box[1].get<double>()), height = static_cast<int>(box[3].get<double>());
  const auto shot = decodePng(screenshot(page, 1280, top + height + 20));
  std::set<uint32_t> colours;
  for (int y = top + 2; y < top + height - 2; y += 2)
    for (int x = static_cast<int>(box[0].get<double>()) + 2; x < static_cast<int>(box[0].get<double>() + box[2].get<double>()) - 2; x += 2) {
      const uint8_t* p = shot.at(x, y);
      colours.insert(static_cast<uint32_t>(p[0]) << 16 | static_cast<uint32_t>(p[1]) << 8 | p[2]);
    }
  EXPECT_GT(colours.size(), 20u);
}

}  // namespace
}  // namespace posgeom::testing
