#include "gpt_neo_layer_types.h"

namespace posgeom::model::gpt_neo {
namespace {

// GPTNeoConfig's default, which its own check then holds to 24 layers.
const nlohmann::json kDefaultAttentionTypes = nlohmann::json::parse(R"([[["global", "local"], 12]])");

}  // namespace

std::vector<std::string> layerTypes(const io::JsonConfig& c, int64_t layers) {
  const auto& j = c.json();
  const bool given = j.contains("attention_types");
  const auto& list = given ? j["attention_types"] : kDefaultAttentionTypes;
  std::vector<std::string> types;
  if (!list.is_array()) c.fail("attention_types must be a list of [types, repeats]");
  constexpr int64_t kManyLayers = int64_t{1} << 40;
  int64_t total = 0;  // layers the list gives, counted without expanding a huge repeat
  for (const auto& item : list) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer())
      c.fail("attention_types must be a list of [types, repeats]");
    const auto repeats = item[1].get<int64_t>();
    if (repeats < 0)
      c.fail("attention_types repeats " + item[0].dump() + " " + item[1].dump() + " times: a repeat count must not be negative");
    for (const auto& t : item[0]) {
      const std::string type = t.is_string() ? t.get<std::string>() : "";
      if (type != "global" && type != "local") c.fail("attention type '" + type + "' is not global or local");
    }
    const auto width = static_cast<int64_t>(item[0].size());
    total = width > 0 && repeats > (kManyLayers - total) / width ? kManyLayers : total + repeats * width;
    for (int64_t r = 0; r < repeats && static_cast<int64_t>(types.size()) < layers; ++r)
      for (const auto& t : item[0]) types.push_back(t.get<std::string>());
  }
  const std::string gives = total == kManyLayers ? "more than 2^40" : std::to_string(total);
  // transformers refuses the mismatch, its default included (it does not fall back to global layers).
  if (!given && total != layers)
    c.fail("attention_types is not set, and transformers' default " + list.dump() + " gives " + gives +
           " layers but num_layers is " + std::to_string(layers) + ": set attention_types, e.g. [[[\"global\"], " +
           std::to_string(layers) + "]]");
  if (total != layers) c.fail("attention_types gives " + gives + " layers but num_layers is " + std::to_string(layers));
  return types;
}

}  // namespace posgeom::model::gpt_neo
