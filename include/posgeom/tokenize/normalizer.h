#pragma once
// Text-to-text steps applied before splitting (tokenizer.json "normalizer").
#include <functional>
#include <string>
#include <vector>

namespace posgeom::tokenize {

// `at_start`: the text begins a document (Prepend applies only there).
using Normalizer = std::function<std::string(std::string text, bool at_start)>;

struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;
};
// Removes control characters and U+FFFD, maps whitespace to ' ', isolates CJK
// ideographs with spaces, strips accents, lowercases (in Hugging Face's order).
Normalizer bertNormalizer(BertNormalizerOptions options);
Normalizer sequenceNormalizer(std::vector<Normalizer> steps);
Normalizer lowercaseNormalizer();
Normalizer stripAccentsNormalizer();
Normalizer unicodeNormalizer(const std::string& form);  // NFC, NFD, NFKC, NFKD
Normalizer prependNormalizer(const std::string& prefix);
Normalizer replaceNormalizer(const std::string& pattern, const std::string& content);

}  // namespace posgeom::tokenize
