#include "posgeom/corpus/token_stream.h"

#include <random>

namespace posgeom::corpus {
namespace {

class TokenizingStream final : public TokenStream {
 public:
  TokenizingStream(std::unique_ptr<DocumentReader> documents, const tokenize::Tokenizer& tokenizer, std::string name)
      : documents_(std::move(documents)), tokenizer_(tokenizer), name_(std::move(name)) {}

  std::optional<TokenBlock> next() override {
    auto chunk = documents_->next();
    if (!chunk) return std::nullopt;
    TokenBlock block;
    block.ids = tokenizer_.encode(chunk->text, encode_stats_, !chunk->document_start);
    block.label = std::move(chunk->label);
    block.document_start = chunk->document_start;
    block.document_end = chunk->document_end;
    tokens_ += static_cast<int64_t>(block.ids.size());
    return block;
  }

  TokenStreamStats stats() const override {
    const auto& d = documents_->stats();
    return {tokens_, d.documents, d.bytes, static_cast<int64_t>(encode_stats_.invalid_utf8_replaced),
            static_cast<int64_t>(encode_stats_.unknown_tokens), d.skipped_rows};
  }
  std::string name() const override { return name_; }

 private:
  std::unique_ptr<DocumentReader> documents_;
  const tokenize::Tokenizer& tokenizer_;
  std::string name_;
  tokenize::EncodeStats encode_stats_;
  int64_t tokens_ = 0;
};

class RandomTokenStream final : public TokenStream {
 public:
  RandomTokenStream(int64_t vocab_size, uint64_t seed)
      : rng_(seed), dist_(0, static_cast<int32_t>(vocab_size - 1)) {}
  std::optional<TokenBlock> next() override {
    TokenBlock block;
    block.ids.resize(1 << 14);
    for (auto& id : block.ids) id = dist_(rng_);
    block.label = "random";
    block.document_start = tokens_ == 0;
    block.document_end = false;
    tokens_ += static_cast<int64_t>(block.ids.size());
    return block;
  }
  TokenStreamStats stats() const override { return {tokens_, 1, 0, 0, 0, 0}; }
  std::string name() const override { return "random"; }

 private:
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int32_t> dist_;
  int64_t tokens_ = 0;
};

class RepeatedRandomStream final : public TokenStream {
 public:
  RepeatedRandomStream(int64_t vocab_size, uint64_t seed, int64_t period)
      : rng_(seed), dist_(0, static_cast<int32_t>(vocab_size - 1)), period_(period) {}
  std::optional<TokenBlock> next() override {
    TokenBlock block;  // one whole document each
    block.ids.resize(static_cast<std::size_t>(3 * period_));
    for (int64_t i = 0; i < period_; ++i) block.ids[static_cast<std::size_t>(i)] = dist_(rng_);
    for (int64_t i = period_; i < 3 * period_; ++i)
      block.ids[static_cast<std::size_t>(i)] = block.ids[static_cast<std::size_t>(i - period_)];
    block.label = "repeated-random";
    tokens_ += 3 * period_;
    ++documents_;
    return block;
  }
  TokenStreamStats stats() const override { return {tokens_, documents_, 0, 0, 0, 0}; }
  std::string name() const override { return "repeated-random"; }

 private:
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int32_t> dist_;
  int64_t period_;
  int64_t tokens_ = 0, documents_ = 0;
};

}  // namespace

std::unique_ptr<TokenStream> repeatedRandomTokens(int64_t vocab_size, uint64_t seed, int64_t period) {
  return std::make_unique<RepeatedRandomStream>(vocab_size, seed, period);
}

std::unique_ptr<TokenStream> tokenizeDocuments(std::unique_ptr<DocumentReader> documents,
                                               const tokenize::Tokenizer& tokenizer, std::string name) {
  return std::make_unique<TokenizingStream>(std::move(documents), tokenizer, std::move(name));
}

std::unique_ptr<TokenStream> randomTokens(int64_t vocab_size, uint64_t seed) {
  return std::make_unique<RandomTokenStream>(vocab_size, seed);
}

}  // namespace posgeom::corpus
