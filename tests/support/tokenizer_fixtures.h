#pragma once
// The expected-id fixtures in ../shared/fixtures/tokenizers.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::testing {

struct TokenizerCase {
  std::string text;
  std::vector<int32_t> ids;
};
// Cases of ../shared/fixtures/tokenizers/<name> (gpt2_expected.json, llama2_expected.json).
std::vector<TokenizerCase> tokenizerCases(const std::string& name);
std::vector<int32_t> encodeAll(const tokenize::Tokenizer& tokenizer, const std::string& text);

}  // namespace posgeom::testing
