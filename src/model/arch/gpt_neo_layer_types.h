#pragma once
// GPT-Neo's attention_types: which layers attend globally and which locally. Private to model/arch.
#include <string>
#include <vector>

#include "posgeom/io/json_file.h"

namespace posgeom::model::gpt_neo {

// attention_types [[["global", "local"], 6], ...] (transformers' default when absent): each
// pattern repeated, one entry per layer, "global" or "local". Refuses, as transformers
// does, a list that does not give `layers` layers.
std::vector<std::string> layerTypes(const io::JsonConfig& c, int64_t layers);

}  // namespace posgeom::model::gpt_neo
