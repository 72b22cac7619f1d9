#pragma once
// Splitting normalized text into pieces that the model encodes independently
// (tokenizer.json "pre_tokenizer").
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "posgeom/tokenize/regex.h"

namespace posgeom::tokenize {

// Appends the pieces of `text` to `out`. `at_start`: the text begins a document (not a
// continuation chunk), where Metaspace-style prefixes go.
using PreTokenizer = std::function<void(std::string_view text, bool at_start, std::vector<std::string>& out)>;

// GPT-2's byte-to-unicode table: every byte as a printable code point, UTF-8 encoded.
const std::vector<std::string>& byteToUnicode();
// Maps raw bytes through byteToUnicode().
std::string byteLevelEncode(std::string_view bytes);

// Byte-level: optional regex split (GPT-2's pattern), then bytes mapped to printable
// code points. Invalid UTF-8 never crashes: each invalid byte becomes its own piece.
PreTokenizer byteLevelPreTokenizer(bool add_prefix_space, std::shared_ptr<const Regex> split);
// BERT: split on whitespace, and every punctuation character its own piece.
PreTokenizer bertPreTokenizer();
PreTokenizer whitespaceSplitPreTokenizer();
// Metaspace: spaces become `replacement` (▁), prepended once at the start of the text
// unless it is a continuation; split before each replacement when `split`.
PreTokenizer metaspacePreTokenizer(const std::string& replacement, bool prepend, bool split);

enum class SplitBehavior { kIsolated, kRemoved, kMergedWithPrevious, kMergedWithNext };
PreTokenizer regexSplitPreTokenizer(std::shared_ptr<const Regex> pattern, SplitBehavior behavior);
PreTokenizer sequencePreTokenizer(std::vector<PreTokenizer> steps);

}  // namespace posgeom::tokenize
