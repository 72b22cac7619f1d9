#include "posgeom/train/training_data.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/io/json_file.h"
#include "posgeom/tokenize/pre_tokenizer.h"
#include "posgeom/tokenize/unicode.h"

namespace posgeom::train {
namespace {

uint64_t mix(uint64_t seed, uint64_t a, uint64_t b) {
  uint64_t state = seed ^ (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full);
  return splitMix(state);
}

// UTF-8 code points of the text (invalid bytes become U+FFFD).
std::vector<std::string> characters(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t start = pos;
    out.push_back(tokenize::decodeUtf8(text, pos) < 0 ? std::string("\xEF\xBF\xBD") : text.substr(start, pos - start));
  }
  return out;
}

double unigramCrossEntropy(const std::vector<int64_t>& train, const std::vector<int64_t>& validation, int64_t vocab) {
  std::vector<double> counts(static_cast<std::size_t>(vocab), 1.0);  // add-one
  for (auto id : train) counts[static_cast<std::size_t>(id)] += 1;
  const double total = static_cast<double>(train.size() + static_cast<std::size_t>(vocab));
  double nats = 0;
  for (auto id : validation) nats -= std::log(counts[static_cast<std::size_t>(id)] / total);
  return nats / static_cast<double>(validation.size());
}

// A token stream split into training and validation parts; windows at random offsets,
// training windows randomised as `noise` says (DataSpec::noise).
class StreamData : public TrainingData {
 public:
  std::vector<int64_t> batch(bool validation, int64_t batch, int64_t length, uint64_t seed, int64_t index) const override {
    auto out = windows(validation, batch, length, seed, index);
    if (validation || noise_ == 0) return out;
    uint64_t state = mix(seed, static_cast<uint64_t>(index), 3);
    const auto vocab = static_cast<uint64_t>(vocabSize());
    const int64_t first = noise_ == 1 ? length / 2 : 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = first; i < length; ++i) out[static_cast<std::size_t>(b * length + i)] = static_cast<int64_t>(splitMix(state) % vocab);
    return out;
  }

 protected:
  explicit StreamData(int64_t noise) : noise_(noise) {}

  // `batch` windows of `length` ids at random offsets of the split.
  virtual std::vector<int64_t> windows(bool validation, int64_t batch, int64_t length, uint64_t seed, int64_t index) const {
    const auto& ids = validation ? validation_ : train_;
    if (static_cast<int64_t>(ids.size()) <= length)
      throw InputError(source_, std::string("the ") + (validation ? "validation" : "training") + " split has " +
                                    std::to_string(ids.size()) + " tokens, fewer than one window of " + std::to_string(length) +
                                    " ([model] context + 1): give a longer corpus or a shorter context");
    std::vector<int64_t> out;
    out.reserve(static_cast<std::size_t>(batch * length));
    uint64_t state = windowSeed(seed, index, validation);
    for (int64_t b = 0; b < batch; ++b) {
      const auto start = static_cast<std::size_t>(splitMix(state) % (ids.size() - static_cast<std::size_t>(length)));
      out.insert(out.end(), ids.begin() + static_cast<std::ptrdiff_t>(start), ids.begin() + static_cast<std::ptrdiff_t>(start + static_cast<std::size_t>(length)));
    }
    return out;
  }
  static uint64_t windowSeed(uint64_t seed, int64_t index, bool validation) { return mix(seed, static_cast<uint64_t>(index), validation ? 2 : 1); }

  std::vector<int64_t> train_, validation_;
  std::string source_ = "[data]";  // what a message names: the corpus

 private:
  int64_t noise_;
};

class TextData final : public StreamData {
 public:
  explicit TextData(const DataSpec& spec) : StreamData(spec.noise), bytes_(spec.tokens == "bytes") {
    std::string text;
    for (const auto& file : corpus::corpusFiles(spec.corpus.string())) {
      std::ifstream in(file, std::ios::binary);
      std::stringstream buffer;
      buffer << in.rdbuf();
      text += buffer.str();
    }
    if (text.empty()) throw InputError(spec.corpus.string(), "the training corpus is empty");
    std::vector<int64_t> ids;
    if (bytes_) {
      for (unsigned char c : text) ids.push_back(c);
    } else {
      const auto chars = characters(text);
      std::map<std::string, int64_t> index;
      for (const auto& c : chars) index.emplace(c, 0);
      vocab_.push_back("<unk>");
      for (auto& [c, id] : index) {
        id = static_cast<int64_t>(vocab_.size());
        vocab_.push_back(c);
      }
      for (const auto& c : chars) ids.push_back(index.at(c));
    }
    const auto split = static_cast<std::size_t>(static_cast<double>(ids.size()) * (1.0 - spec.validation_fraction));
    train_.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(split));
    validation_.assign(ids.begin() + static_cast<std::ptrdiff_t>(split), ids.end());
    corpus_ = spec.corpus.string();
    source_ = corpus_;
  }
  int64_t vocabSize() const override { return bytes_ ? 256 : static_cast<int64_t>(vocab_.size()); }
  nlohmann::json tokenizerJson() const override {
    nlohmann::json vocab = nlohmann::json::object();
    if (bytes_) {
      for (int b = 0; b < 256; ++b) vocab[tokenize::byteToUnicode()[static_cast<std::size_t>(b)]] = b;
      return {{"version", "1.0"},
              {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}},
              {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}},
              {"decoder", {{"type", "ByteLevel"}}}};
    }
    for (std::size_t i = 0; i < vocab_.size(); ++i) vocab[vocab_[i]] = i;
    return {{"version", "1.0"},
            {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}, {"unk_token", "<unk>"}}}};
  }
  nlohmann::json describe() const override {
    return {{"corpus", corpus_},
            {"tokens", bytes_ ? "bytes" : "char"},
            {"vocab_size", vocabSize()},
            {"train_tokens", train_.size()},
            {"validation_tokens", validation_.size()},
            {"unigram_validation_loss", unigramCrossEntropy(train_, validation_, vocabSize())}};
  }

 private:
  bool bytes_;
  std::vector<std::string> vocab_;  // char: id -> character, 0 is <unk>
  std::string corpus_;
};

// "a+b=c\n" problems with operands of min_digits..digits digits, packed into a stream.
class AdditionData final : public StreamData {
 public:
  explicit AdditionData(const DataSpec& spec)
      : StreamData(spec.noise), digits_(spec.digits), min_digits_(spec.min_digits), format_(additionFormat(spec)),
        answer_loss_(spec.answer_loss), one_per_window_(spec.window == "problem") {
    // A fixed pool makes the splits disjoint and the baseline computable.
    uint64_t state = 0x5EED;
    for (int split = 0; split < 2; ++split) {
      auto& ids = split == 0 ? train_ : validation_;
      const int64_t problems = split == 0 ? 200000 : 20000;
      for (int64_t p = 0; p < problems; ++p) {
        (split == 0 ? train_starts_ : validation_starts_).push_back(ids.size());
        const auto range = static_cast<uint64_t>(digits_ - min_digits_ + 1);
        const int64_t da = min_digits_ + static_cast<int64_t>(splitMix(state) % range);
        const int64_t db = min_digits_ + static_cast<int64_t>(splitMix(state) % range);
        const auto [a, b] = randomOperands(state, da, db, format_.carries);
        for (char c : additionProblem(a, b, format_)) ids.push_back(idOf(c));
      }
    }
  }
  static int64_t idOf(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    return c == '+' ? 10 : c == '=' ? 11 : 12;  // '\n'
  }
  int64_t vocabSize() const override { return 13; }
  std::vector<int64_t> windows(bool validation, int64_t batch, int64_t length, uint64_t seed, int64_t index) const override {
    if (!one_per_window_) return StreamData::windows(validation, batch, length, seed, index);
    const auto& ids = validation ? validation_ : train_;
    const auto& starts = validation ? validation_starts_ : train_starts_;
    std::vector<int64_t> out(static_cast<std::size_t>(batch * length), idOf('\n'));
    uint64_t state = windowSeed(seed, index, validation);
    for (int64_t b = 0; b < batch; ++b) {
      const auto p = static_cast<std::size_t>(splitMix(state) % starts.size());
      const std::size_t begin = starts[p], end = p + 1 < starts.size() ? starts[p + 1] : ids.size();
      if (static_cast<int64_t>(end - begin) + 1 > length)  // the config check makes this unreachable from posgeom train
        throw InputError("[data] window", "a problem of " + std::to_string(end - begin) + " tokens does not fit a window of " +
                                              std::to_string(length));
      std::copy(ids.begin() + static_cast<std::ptrdiff_t>(begin), ids.begin() + static_cast<std::ptrdiff_t>(end),
                out.begin() + b * length + 1);  // position 0 keeps its "\n"
    }
    return out;
  }
  std::vector<float> lossWeights(const std::vector<int64_t>& ids, int64_t batch, int64_t length) const override {
    return answer_loss_ ? answerWeights(ids, batch, length) : std::vector<float>{};
  }
  nlohmann::json tokenizerJson() const override {
    nlohmann::json vocab = nlohmann::json::object();
    for (int d = 0; d < 10; ++d) vocab[std::string(1, static_cast<char>('0' + d))] = d;
    vocab["+"] = 10;
    vocab["="] = 11;
    vocab["\n"] = 12;
    return {{"version", "1.0"}, {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}};
  }
  nlohmann::json describe() const override {
    return {{"task", "addition"}, {"digits", digits_}, {"min_digits", min_digits_}, {"reverse_sum", format_.reverse_sum},
            {"carries", format_.carries}, {"window", one_per_window_ ? "problem" : "stream"}, {"vocab_size", 13}, {"train_tokens", train_.size()},
            {"validation_tokens", validation_.size()}, {"unigram_validation_loss", unigramCrossEntropy(train_, validation_, 13)}};
  }

 private:
  int64_t digits_, min_digits_;
  AdditionFormat format_;
  bool answer_loss_, one_per_window_;
  std::vector<std::size_t> train_starts_, validation_starts_;  // where each problem begins in its split
};

}  // namespace

uint64_t splitMix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t randomOperand(uint64_t& state, int64_t digits) {
  uint64_t lo = 1;
  for (int64_t i = 1; i < digits; ++i) lo *= 10;
  if (digits == 1) lo = 0;
  const uint64_t hi = digits == 1 ? 10 : lo * 10;
  return lo + splitMix(state) % (hi - lo);
}

std::pair<uint64_t, uint64_t> randomOperands(uint64_t& state, int64_t a_digits, int64_t b_digits, bool carries) {
  for (;;) {
    const uint64_t a = randomOperand(state, a_digits);
    if (carries) return {a, randomOperand(state, b_digits)};
    // b digit by digit, least significant first: each at most 9 - a's digit in its column.
    uint64_t b = 0, place = 1, rest = a;
    bool room = true;
    for (int64_t k = 0; k < b_digits; ++k, place *= 10, rest /= 10) {
      const uint64_t lowest = k + 1 == b_digits && b_digits > 1 ? 1 : 0, highest = 9 - rest % 10;
      if (highest < lowest) {
        room = false;
        break;
      }
      b += place * (lowest + splitMix(state) % (highest - lowest + 1));
    }
    if (room) return {a, b};
  }
}

std::string additionProblem(uint64_t a, uint64_t b, const AdditionFormat& format) {
  std::string sum = std::to_string(a + b);
  if (format.reverse_sum) std::reverse(sum.begin(), sum.end());
  return std::to_string(a) + "+" + std::to_string(b) + "=" + sum + "\n";
}

std::vector<float> answerWeights(const std::vector<int64_t>& ids, int64_t batch, int64_t length) {
  constexpr int64_t kEquals = 11, kNewline = 12;  // AdditionData's ids of '=' and '\n'
  std::vector<float> weights;
  weights.reserve(static_cast<std::size_t>(batch * (length - 1)));
  for (int64_t b = 0; b < batch; ++b) {
    int state = -1;  // -1 unknown, 0 in a question, 1 in an answer
    for (int64_t i = 0; i < length; ++i) {
      const int64_t id = ids[static_cast<std::size_t>(b * length + i)];
      if (i > 0) weights.push_back(state == 1 ? 1.0f : 0.0f);  // the target at i, judged by what came before it
      if (id == kEquals) state = 1;
      else if (id == kNewline) state = 0;
    }
  }
  return weights;
}

AdditionFormat additionFormat(const DataSpec& spec) { return {spec.reverse_sum, spec.carries}; }

AdditionFormat trainedAdditionFormat(const std::filesystem::path& model_dir) {
  const auto path = model_dir / "train_config.json";
  if (!std::filesystem::is_regular_file(path)) return {};
  const auto config = io::readJsonFile(path);
  const auto data = config.value("data", nlohmann::json::object());
  return {data.value("reverse_sum", false), data.value("carries", true)};
}

std::unique_ptr<TrainingData> openTrainingData(const DataSpec& spec) {
  if (spec.task == "addition") return std::make_unique<AdditionData>(spec);
  return std::make_unique<TextData>(spec);
}

}  // namespace posgeom::train
