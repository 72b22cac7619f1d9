#include <fstream>
#include <memory>

#include "posgeom/base/error.h"
#include "posgeom/tokenize/formats.h"
#include "posgeom/tokenize/pipeline_tokenizer.h"
#include "posgeom/tokenize/wordpiece.h"

namespace posgeom::tokenize {

std::unique_ptr<Tokenizer> loadBertVocab(const std::filesystem::path& vocab_txt, const BertVocabOptions& options) {
  std::ifstream in(vocab_txt);
  if (!in) throw InputError(vocab_txt.string(), "cannot open");
  std::unordered_map<std::string, int32_t> vocab;
  std::string line;
  int32_t id = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    vocab.emplace(line, id++);
  }
  if (vocab.empty()) throw InputError(vocab_txt.string(), "empty vocabulary");
  auto wordpiece = std::make_shared<WordPieceModel>(vocab, WordPieceOptions{}, vocab_txt.string());

  Pipeline p;
  p.description = "BERT WordPiece (vocab.txt)";
  p.normalizer = bertNormalizer({true, options.tokenize_chinese_chars, options.strip_accents.value_or(options.lowercase),
                                 options.lowercase});
  p.pre_tokenizer = bertPreTokenizer();
  p.model = [wordpiece](std::string_view w, std::vector<int32_t>& out, EncodeStats& s) { wordpiece->encode(w, out, s); };
  p.model_vocab_size = wordpiece->vocabSize();
  for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    if (const auto sid = wordpiece->idOf(special)) p.added_tokens.push_back({special, *sid, true});
  auto tokenizer = std::make_unique<PipelineTokenizer>(std::move(p));
  const auto cls = wordpiece->idOf("[CLS]"), sep = wordpiece->idOf("[SEP]");
  if (cls && sep) tokenizer->setFraming({{*cls}, {*sep}});
  return tokenizer;
}

}  // namespace posgeom::tokenize
