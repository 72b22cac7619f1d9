#include <gtest/gtest.h>

#include "gpt_neo_layer_types.h"
#include "posgeom/base/error.h"

namespace posgeom::model::gpt_neo {
namespace {

io::JsonConfig config(const std::string& json) { return {nlohmann::json::parse(json), "config.json"}; }

std::string refusal(const io::JsonConfig& c, int64_t layers) {
  try {
    layerTypes(c, layers);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(GptNeoLayerTypes, EachPatternRepeatedOneEntryPerLayer) {
  EXPECT_EQ(layerTypes(config(R"({"attention_types": [[["global", "local"], 2], [["local"], 1]]})"), 5),
            (std::vector<std::string>{"global", "local", "global", "local", "local"}));
  // transformers' default: 12 pairs for its 24 layers.
  const auto defaults = layerTypes(config("{}"), 24);
  ASSERT_EQ(defaults.size(), 24u);
  EXPECT_EQ(defaults[22], "global");
  EXPECT_EQ(defaults[23], "local");
}

TEST(GptNeoLayerTypes, AListThatDoesNotGiveTheLayersIsRefused) {
  EXPECT_NE(refusal(config(R"({"attention_types": [[["global"], 3]]})"), 2).find("attention_types gives 3 layers but num_layers is 2"),
            std::string::npos);
  EXPECT_NE(refusal(config("{}"), 2).find("set attention_types"), std::string::npos);
  EXPECT_NE(refusal(config(R"({"attention_types": [[["dense"], 2]]})"), 2).find("'dense' is not global or local"),
            std::string::npos);
  EXPECT_NE(refusal(config(R"({"attention_types": [[["local"], 1099511627776], [["global"], 1099511627776]]})"), 2)
                .find("more than 2^40"),
            std::string::npos);
}

}  // namespace
}  // namespace posgeom::model::gpt_neo
