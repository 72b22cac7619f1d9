#pragma once
// Each id's entry in a tokenizer's vocabulary, as its files spell it (GPT-2's "Ġthe",
// BERT's "##ing"): how reports name tokens. Only reads; no tokenizer is built.
#include <filesystem>
#include <string>
#include <vector>

namespace posgeom::tokenize {

// From tokenizer.json (model.vocab and added_tokens), else vocab.json, else vocab.txt (one
// token a line). Ids no file names stay empty; no file at all: an empty list.
std::vector<std::string> readTokenNames(const std::filesystem::path& dir);

// names[id] when it is there and not empty, else "#<id>".
std::string tokenName(const std::vector<std::string>& names, int64_t id);

}  // namespace posgeom::tokenize
