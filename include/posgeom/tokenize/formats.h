#pragma once
// The tokenizer file formats, one loader each.
#include <filesystem>
#include <memory>

#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::tokenize {

// Hugging Face tokenizers' tokenizer.json: BPE (byte-level or with byte fallback) and
// WordPiece models with their normalizers, pre-tokenizers, added tokens and post-processor.
std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path& file);

// GPT-2's vocab.json + merges.txt, with <|endoftext|> matched in text as HF does.
std::unique_ptr<Tokenizer> loadGpt2Files(const std::filesystem::path& vocab_json, const std::filesystem::path& merges_txt);

struct BertVocabOptions {
  bool lowercase = true;
  std::optional<bool> strip_accents;  // unset: follows lowercase
  bool tokenize_chinese_chars = true;
};
// BERT's vocab.txt (one token per line, id = line number).
std::unique_ptr<Tokenizer> loadBertVocab(const std::filesystem::path& vocab_txt, const BertVocabOptions& options);

// A SentencePiece tokenizer.model through the SentencePiece library.
std::unique_ptr<Tokenizer> loadSentencePiece(const std::filesystem::path& model_file);

}  // namespace posgeom::tokenize
