#include "posgeom/report/neuron_tables.h"

#include <cmath>

#include "test_support.h"

namespace posgeom::testing {
namespace {

heads::NeuronAnalysis twoNeurons() {
  heads::NeuronAnalysis a;
  a.contextual_heads = {1, 3};
  a.groups = {{{1, 3}, 0.9}};
  a.inverse_scale = 2;
  a.windows = 8;
  a.neurons = {{5, 2.5, 0.8, 0.95, {{2, 1.5}, {0, 0.5}}, {{1, -2.0}}},
               {0, 1.0, std::nan(""), std::nan(""), {{1, 0.25}}, {{2, -0.5}}}};
  return a;
}

TEST(NeuronTables, SummaryCsvAndSection) {
  const std::vector<std::string> names{"a", "b,\"q\"", ""};  // id 2 unnamed
  const auto j = report::neuronsJson(twoNeurons(), names);
  EXPECT_EQ(j["contextual_heads"], (nlohmann::json{"0.1", "0.3"}));
  EXPECT_EQ(j["groups"][0]["heads"], (nlohmann::json{"0.1", "0.3"}));
  EXPECT_EQ(j["top"][0]["neuron"], 5);
  EXPECT_EQ(j["top"][0]["top_positive"][0]["token"], "#2");
  EXPECT_EQ(j["top"][0]["top_negative"][0]["token"], "b,\"q\"");
  EXPECT_TRUE(j["top"][1]["correlation"].is_null());
  EXPECT_DOUBLE_EQ(j["mean_correlation_top"].get<double>(), 0.8);  // the finite ones
  EXPECT_DOUBLE_EQ(j["mean_window_correlation_top"].get<double>(), 0.95);
  const auto csv = report::neuronsCsv(twoNeurons(), names);
  EXPECT_EQ(csv, "neuron,score,correlation,window_correlation,top_positive,top_negative\n"
                 "5,2.5,0.8,0.95,\"#2 (1.5) | a (0.5)\",\"b,\"\"q\"\" (-2)\"\n"
                 "0,1,,,\"b,\"\"q\"\" (0.25)\",\"#2 (-0.5)\"\n");
  const auto section = report::neuronsSection({{"neurons", j}});
  EXPECT_NE(section.find("<section id=\"neurons\">"), std::string::npos);
  EXPECT_NE(section.find("Contextual heads: 0.1, 0.3"), std::string::npos);
  EXPECT_NE(section.find("b,&quot;q&quot;"), std::string::npos);  // escaped
  EXPECT_EQ(report::neuronsSection(nlohmann::json::object()), "");
}

}  // namespace
}  // namespace posgeom::testing
