#include "posgeom/tokenize/token_names.h"

#include <fstream>

#include "posgeom/io/json_file.h"

namespace posgeom::tokenize {
namespace {

void place(std::vector<std::string>& names, int64_t id, const std::string& name) {
  if (id < 0 || id > (1 << 24)) return;  // no real vocabulary is larger
  if (static_cast<std::size_t>(id) >= names.size()) names.resize(static_cast<std::size_t>(id) + 1);
  names[static_cast<std::size_t>(id)] = name;
}

void placeVocab(std::vector<std::string>& names, const nlohmann::json& vocab) {
  if (!vocab.is_object()) return;
  for (const auto& [token, id] : vocab.items())
    if (id.is_number_integer()) place(names, id.get<int64_t>(), token);
}

}  // namespace

std::vector<std::string> readTokenNames(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  if (std::filesystem::is_regular_file(dir / "tokenizer.json")) {
    const auto j = io::readJsonFile(dir / "tokenizer.json");
    if (j.contains("model") && j["model"].is_object() && j["model"].contains("vocab")) placeVocab(names, j["model"]["vocab"]);
    if (j.contains("added_tokens") && j["added_tokens"].is_array())
      for (const auto& t : j["added_tokens"])
        if (t.is_object() && t.contains("id") && t["id"].is_number_integer() && t.contains("content") && t["content"].is_string())
          place(names, t["id"].get<int64_t>(), t["content"].get<std::string>());
    if (!names.empty()) return names;
  }
  if (std::filesystem::is_regular_file(dir / "vocab.json")) {
    placeVocab(names, io::readJsonFile(dir / "vocab.json"));
    return names;
  }
  if (std::ifstream in(dir / "vocab.txt"); in) {
    std::string line;
    for (int64_t id = 0; std::getline(in, line); ++id) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      place(names, id, line);
    }
  }
  return names;
}

std::string tokenName(const std::vector<std::string>& names, int64_t id) {
  if (id >= 0 && static_cast<std::size_t>(id) < names.size() && !names[static_cast<std::size_t>(id)].empty())
    return names[static_cast<std::size_t>(id)];
  return "#" + std::to_string(id);
}

}  // namespace posgeom::tokenize
