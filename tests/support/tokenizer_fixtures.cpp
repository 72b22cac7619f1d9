#include "tokenizer_fixtures.h"

#include "posgeom/io/json_file.h"
#include "test_support.h"

namespace posgeom::testing {

std::vector<TokenizerCase> tokenizerCases(const std::string& name) {
  const auto j = io::readJsonFile(sharedDir() / "fixtures" / "tokenizers" / name);
  std::vector<TokenizerCase> out;
  for (const auto& c : j.at("cases")) out.push_back({c.at("text").get<std::string>(), c.at("ids").get<std::vector<int32_t>>()});
  return out;
}

std::vector<int32_t> encodeAll(const tokenize::Tokenizer& tokenizer, const std::string& text) {
  tokenize::EncodeStats stats;
  return tokenizer.encode(text, stats);
}

}  // namespace posgeom::testing
