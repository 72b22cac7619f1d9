#include "posgeom/corpus/corpus_source.h"

#include <filesystem>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"

namespace posgeom::corpus {

bool isPretokenized(const std::string& path) {
  const auto ext = std::filesystem::path(path).extension();
  return ext == ".bin" || ext == ".npy";
}

bool isGenerated(const std::string& path) { return path == "random" || path == "repeated-random"; }

std::unique_ptr<TokenStream> openCorpus(const CorpusOptions& options, const tokenize::Tokenizer* tokenizer,
                                        int64_t vocab_size) {
  if (options.path.empty()) throw InputError(option::kCorpus, "no corpus given");
  if (options.path == "random") return randomTokens(vocab_size, options.seed);
  if (options.path == "repeated-random") {
    if (options.repeat_period < 1) throw InputError("--corpus repeated-random", "needs a repeat period of at least 1");
    return repeatedRandomTokens(vocab_size, options.seed, options.repeat_period);
  }
  if (isPretokenized(options.path)) return openPretokenized(options.path, options.token_dtype, vocab_size);
  if (!tokenizer) throw InputError(options.path, "a text corpus needs a tokenizer (--model with tokenizer files, or --tokenizer)");
  return tokenizeDocuments(openDocuments(options.path, options.text), *tokenizer, options.path);
}

}  // namespace posgeom::corpus
