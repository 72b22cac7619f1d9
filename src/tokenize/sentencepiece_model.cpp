// SentencePiece's tokenizer.model, read and encoded by posgeom itself: the SentencePiece
// library embeds its own copy of protobuf, which clashes with the one LibTorch loads, so
// the two cannot share a process. The library stays the oracle in the tests.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/tokenize/formats.h"
#include "posgeom/tokenize/pipeline_tokenizer.h"
#include "posgeom/tokenize/unicode.h"
#include "posgeom/tokenize/word_cache.h"

namespace posgeom::tokenize {
namespace {

// The few fields of sentencepiece_model.proto that encoding needs.
struct SentencePieceSpec {
  enum PieceType { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };
  struct Piece {
    std::string text;
    float score = 0;
    int type = kNormal;
  };
  std::vector<Piece> pieces;
  int model_type = 1;  // 1 unigram, 2 BPE
  bool byte_fallback = false;
  int bos_id = 1;
  std::string normalizer = "nmt_nfkc";
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

// Minimal protobuf wire-format reader.
class Wire {
 public:
  Wire(std::string_view data, const std::string& where) : data_(data), where_(where) {}
  bool done() const { return pos_ >= data_.size(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) fail();
      const auto b = static_cast<unsigned char>(data_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail();
  }
  std::string_view bytes() {
    const auto n = varint();
    if (n > data_.size() - pos_) fail();
    const auto out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  float fixed32() {
    if (data_.size() - pos_ < 4) fail();
    float f;
    std::memcpy(&f, data_.data() + pos_, 4);
    pos_ += 4;
    return f;
  }
  void skip(int wire_type) {
    switch (wire_type) {
      case 0: varint(); break;
      case 1: if (data_.size() - pos_ < 8) fail(); pos_ += 8; break;
      case 2: bytes(); break;
      case 5: fixed32(); break;
      default: fail();
    }
  }
  [[noreturn]] void fail() const { throw InputError(where_, "not a SentencePiece model (malformed protobuf)"); }

 private:
  std::string_view data_;
  std::string where_;
  std::size_t pos_ = 0;
};

SentencePieceSpec parseModel(const std::string& data, const std::string& where) {
  SentencePieceSpec spec;
  Wire model(data, where);
  while (!model.done()) {
    const auto tag = model.varint();
    const int field = static_cast<int>(tag >> 3), type = static_cast<int>(tag & 7);
    if (field == 1 && type == 2) {
      Wire piece(model.bytes(), where);
      SentencePieceSpec::Piece p;
      while (!piece.done()) {
        const auto t = piece.varint();
        if ((t >> 3) == 1 && (t & 7) == 2) p.text = std::string(piece.bytes());
        else if ((t >> 3) == 2 && (t & 7) == 5) p.score = piece.fixed32();
        else if ((t >> 3) == 3 && (t & 7) == 0) p.type = static_cast<int>(piece.varint());
        else piece.skip(static_cast<int>(t & 7));
      }
      spec.pieces.push_back(std::move(p));
    } else if (field == 2 && type == 2) {  // TrainerSpec
      Wire trainer(model.bytes(), where);
      while (!trainer.done()) {
        const auto t = trainer.varint();
        const auto f = t >> 3;
        if ((t & 7) != 0) {
          trainer.skip(static_cast<int>(t & 7));
          continue;
        }
        const auto v = trainer.varint();
        if (f == 3) spec.model_type = static_cast<int>(v);
        else if (f == 35) spec.byte_fallback = v != 0;
        else if (f == 41) spec.bos_id = static_cast<int>(static_cast<int32_t>(v));
      }
    } else if (field == 3 && type == 2) {  // NormalizerSpec
      Wire norm(model.bytes(), where);
      while (!norm.done()) {
        const auto t = norm.varint();
        const auto f = t >> 3;
        if (f == 1 && (t & 7) == 2) spec.normalizer = std::string(norm.bytes());
        else if (f == 3 && (t & 7) == 0) spec.add_dummy_prefix = norm.varint() != 0;
        else if (f == 4 && (t & 7) == 0) spec.remove_extra_whitespaces = norm.varint() != 0;
        else if (f == 5 && (t & 7) == 0) spec.escape_whitespaces = norm.varint() != 0;
        else norm.skip(static_cast<int>(t & 7));
      }
    } else {
      model.skip(type);
    }
  }
  if (spec.pieces.empty()) throw InputError(where, "not a SentencePiece model (no pieces)");
  return spec;
}

const std::string kSpace = "\xE2\x96\x81";  // ▁

// SentencePiece's BPE: within each word, repeatedly merge the adjacent pair whose
// concatenation is a piece with the highest score (leftmost on ties); leftover symbols
// that are not pieces fall back to bytes or the unknown id.
class SentencePieceBpe {
 public:
  explicit SentencePieceBpe(const SentencePieceSpec& spec) : byte_fallback_(spec.byte_fallback) {
    for (std::size_t i = 0; i < spec.pieces.size(); ++i) {
      const auto& p = spec.pieces[i];
      const auto id = static_cast<int32_t>(i);
      if (p.type == SentencePieceSpec::kUnknown) unk_id_ = id;
      if (p.type == SentencePieceSpec::kNormal || p.type == SentencePieceSpec::kUserDefined) ids_.emplace(p.text, Entry{id, p.score});
      if (p.type == SentencePieceSpec::kByte && p.text.size() == 6) byte_ids_[std::stoi(p.text.substr(3, 2), nullptr, 16)] = id;
    }
  }

  void encode(std::string_view word, std::vector<int32_t>& out, EncodeStats& stats) const {
    const auto before = out.size();
    encodeCached(cache_, word, out, [&](std::string_view w, std::vector<int32_t>& ids) { encodeUncached(w, ids); });
    stats.unknown_tokens += static_cast<std::size_t>(std::count(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(), unk_id_));
  }

 private:
  void encodeUncached(std::string_view word, std::vector<int32_t>& out) const {
    std::vector<std::string> symbols;
    for (std::size_t pos = 0; pos < word.size();) {
      const std::size_t start = pos;
      decodeUtf8(word, pos);
      symbols.emplace_back(word.substr(start, pos - start));
    }
    for (;;) {
      float best = -std::numeric_limits<float>::infinity();
      std::size_t at = symbols.size();
      for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
        const auto it = ids_.find(symbols[i] + symbols[i + 1]);
        if (it != ids_.end() && it->second.score > best) {
          best = it->second.score;
          at = i;
        }
      }
      if (at == symbols.size()) break;
      symbols[at] += symbols[at + 1];
      symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(at) + 1);
    }
    for (const auto& s : symbols) {
      if (const auto it = ids_.find(s); it != ids_.end()) {
        out.push_back(it->second.id);
      } else if (byte_fallback_) {
        for (unsigned char b : s) out.push_back(byte_ids_[b]);
      } else {
        out.push_back(unk_id_);
      }
    }
  }

  struct Entry {
    int32_t id;
    float score;
  };
  std::unordered_map<std::string, Entry> ids_;
  int32_t byte_ids_[256] = {};
  int32_t unk_id_ = 0;
  bool byte_fallback_;
  WordCache cache_;
};

// Collapses runs of spaces and trims them, as remove_extra_whitespaces does.
Normalizer removeExtraWhitespace() {
  return [](std::string text, bool) {
    std::string out;
    for (char c : text) {
      if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
      out += c;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
}

// Escapes spaces as ▁ and cuts the text before every ▁ that follows another character:
// a run of ▁ stays with the word after it, so whitespace-only pieces (▁▁) can still form,
// and no merge crosses a cut because no piece holds a ▁ after another character.
PreTokenizer sentencePieceWords(const std::string& space) {
  return [space](std::string_view text, bool, std::vector<std::string>& out) {
    std::string word;
    bool after_other = false;
    for (char c : text) {
      if (c == ' ') {
        if (after_other && !word.empty()) out.push_back(std::move(word)), word.clear();
        word += space;
        after_other = false;
      } else {
        word += c;
        after_other = true;
      }
    }
    if (!word.empty()) out.push_back(std::move(word));
  };
}

}  // namespace

std::unique_ptr<Tokenizer> loadSentencePiece(const std::filesystem::path& model_file) {
  std::ifstream in(model_file, std::ios::binary);
  if (!in) throw InputError(model_file.string(), "cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const auto spec = parseModel(buffer.str(), model_file.string());
  if (spec.model_type != 2)
    throw InputError(model_file.string(), "only BPE SentencePiece models are supported (this one is " +
                                              std::string(spec.model_type == 1 ? "Unigram" : "another type") + ")");
  if (spec.normalizer != "identity")
    throw InputError(model_file.string(), "SentencePiece normalizer '" + spec.normalizer +
                                              "' is not supported (Llama's 'identity' is)");
  auto bpe = std::make_shared<SentencePieceBpe>(spec);
  Pipeline p;
  p.description = "SentencePiece BPE (tokenizer.model)";
  std::vector<Normalizer> steps;
  if (spec.remove_extra_whitespaces) steps.push_back(removeExtraWhitespace());
  if (spec.add_dummy_prefix) steps.push_back(prependNormalizer(" "));  // at a document's start only
  p.normalizer = sequenceNormalizer(std::move(steps));
  p.pre_tokenizer = sentencePieceWords(spec.escape_whitespaces ? kSpace : " ");
  p.model = [bpe](std::string_view w, std::vector<int32_t>& out, EncodeStats& s) { bpe->encode(w, out, s); };
  p.model_vocab_size = static_cast<int64_t>(spec.pieces.size());
  auto tokenizer = std::make_unique<PipelineTokenizer>(std::move(p));
  if (spec.bos_id >= 0 && spec.bos_id < static_cast<int>(spec.pieces.size())) tokenizer->setFraming({{spec.bos_id}, {}});
  return tokenizer;
}

}  // namespace posgeom::tokenize
