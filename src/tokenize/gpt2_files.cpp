#include <fstream>
#include <memory>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/tokenize/bpe.h"
#include "posgeom/tokenize/formats.h"
#include "posgeom/tokenize/pipeline_tokenizer.h"

namespace posgeom::tokenize {

std::unique_ptr<Tokenizer> loadGpt2Files(const std::filesystem::path& vocab_json, const std::filesystem::path& merges_txt) {
  const auto json = io::readJsonFile(vocab_json);
  if (!json.is_object()) throw InputError(vocab_json.string(), "expected an object of token -> id");
  std::unordered_map<std::string, int32_t> vocab;
  for (const auto& [token, id] : json.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) throw InputError(vocab_json.string(), "id of '" + token + "' is not a non-negative integer");
    vocab.emplace(token, id.get<int32_t>());
  }
  std::ifstream in(merges_txt);
  if (!in) throw InputError(merges_txt.string(), "cannot open");
  std::vector<std::pair<std::string, std::string>> merges;
  std::string line;
  std::size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.rfind("#version", 0) == 0) continue;
    const auto space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size())
      throw InputError(merges_txt.string(), "line " + std::to_string(line_number) + " is not 'left right'");
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  auto bpe = std::make_shared<BpeModel>(std::move(vocab), merges, BpeOptions{}, merges_txt.string());
  bpe->requireEveryByteSymbol(vocab_json.string());
  Pipeline p;
  p.description = "GPT-2 byte-level BPE (vocab.json + merges.txt)";
  p.pre_tokenizer = byteLevelPreTokenizer(false, std::make_shared<Regex>(kGpt2SplitPattern, "GPT-2 pattern"));
  p.model = [bpe](std::string_view piece, std::vector<int32_t>& out, EncodeStats& stats) { bpe->encode(piece, out, stats); };
  p.model_vocab_size = bpe->vocabSize();
  if (const auto eot = bpe->idOf("<|endoftext|>")) p.added_tokens.push_back({"<|endoftext|>", *eot, true});
  p.byte_level = true;
  return std::make_unique<PipelineTokenizer>(std::move(p));
}

}  // namespace posgeom::tokenize
