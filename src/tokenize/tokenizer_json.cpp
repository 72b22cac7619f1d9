// tokenizer.json (Hugging Face tokenizers): the components posgeom's model families use.
// An unsupported component is an InputError that names it, never a silent approximation.
#include <spdlog/spdlog.h>

#include <memory>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/tokenize/bpe.h"
#include "posgeom/tokenize/formats.h"
#include "posgeom/tokenize/pipeline_tokenizer.h"
#include "posgeom/tokenize/wordpiece.h"

namespace posgeom::tokenize {
namespace {
using nlohmann::json;

class Parser {
 public:
  explicit Parser(std::filesystem::path file) : file_(std::move(file)), where_(file_.string()) {}

  std::unique_ptr<Tokenizer> parse() {
    const json root = io::readJsonFile(file_);
    if (!root.is_object() || !root.contains("model")) fail("no 'model' section");
    Pipeline p;
    p.normalizer = normalizer(root.value("normalizer", json()));
    p.pre_tokenizer = preTokenizer(root.value("pre_tokenizer", json()), p.byte_level);
    model(root["model"], p);
    // transformers does the same without a word: the text between added tokens is one word.
    if (!p.pre_tokenizer && root["model"].value("type", std::string()) == "WordPiece")
      spdlog::warn("{}: a WordPiece model without a pre_tokenizer takes each text as one word: any text longer than "
                   "max_input_chars_per_word becomes one unknown token",
                   where_);
    for (const auto& t : root.value("added_tokens", json::array())) {
      if (!t.is_object() || !t.contains("content") || !t.contains("id")) fail("malformed entry in 'added_tokens'");
      p.added_tokens.push_back({t["content"].get<std::string>(), t["id"].get<int32_t>(), t.value("special", false)});
    }
    auto framing = postProcessor(root.value("post_processor", json()), p.added_tokens);
    auto tokenizer = std::make_unique<PipelineTokenizer>(std::move(p));
    tokenizer->setFraming(std::move(framing));
    return tokenizer;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw InputError(where_, what); }

  static std::string typeOf(const json& j) { return j.is_object() ? j.value("type", std::string()) : std::string(); }

  Normalizer normalizer(const json& j) {
    if (j.is_null()) return {};
    const auto type = typeOf(j);
    if (type == "Sequence") {
      std::vector<Normalizer> steps;
      for (const auto& s : j.value("normalizers", json::array())) steps.push_back(normalizer(s));
      return sequenceNormalizer(std::move(steps));
    }
    if (type == "BertNormalizer") {
      const bool lower = j.value("lowercase", true);
      const auto& accents = j.value("strip_accents", json());
      return bertNormalizer({j.value("clean_text", true), j.value("handle_chinese_chars", true),
                             accents.is_boolean() ? accents.get<bool>() : lower, lower});
    }
    if (type == "Lowercase") return lowercaseNormalizer();
    if (type == "StripAccents") return stripAccentsNormalizer();
    if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") return unicodeNormalizer(type);
    if (type == "Prepend") return prependNormalizer(j.value("prepend", std::string()));
    if (type == "Replace") {
      const auto& pattern = j.value("pattern", json());
      if (!pattern.contains("String")) fail("normalizer Replace supports only String patterns");
      return replaceNormalizer(pattern["String"].get<std::string>(), j.value("content", std::string()));
    }
    fail("unsupported normalizer '" + type + "'");
  }

  std::shared_ptr<const Regex> regexOf(const json& pattern) {
    if (pattern.contains("Regex")) return std::make_shared<Regex>(pattern["Regex"].get<std::string>(), where_);
    if (pattern.contains("String")) {
      std::string escaped;
      for (char c : pattern["String"].get<std::string>()) {
        if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) escaped += '\\';
        escaped += c;
      }
      return std::make_shared<Regex>(escaped, where_);
    }
    fail("Split pattern must be a String or a Regex");
  }

  PreTokenizer preTokenizer(const json& j, bool& byte_level) {
    if (j.is_null()) return {};
    const auto type = typeOf(j);
    if (type == "Sequence") {
      std::vector<PreTokenizer> steps;
      for (const auto& s : j.value("pretokenizers", json::array())) steps.push_back(preTokenizer(s, byte_level));
      return sequencePreTokenizer(std::move(steps));
    }
    if (type == "ByteLevel") {
      byte_level = true;
      std::shared_ptr<const Regex> split;
      if (j.value("use_regex", true)) split = std::make_shared<Regex>(kGpt2SplitPattern, where_);
      return byteLevelPreTokenizer(j.value("add_prefix_space", false), split);
    }
    if (type == "BertPreTokenizer") return bertPreTokenizer();
    if (type == "WhitespaceSplit") return whitespaceSplitPreTokenizer();
    if (type == "Whitespace")
      return regexSplitPreTokenizer(std::make_shared<Regex>(R"(\w+|[^\w\s]+)", where_), SplitBehavior::kIsolated);
    if (type == "Metaspace") {
      const auto scheme = j.value("prepend_scheme", std::string(j.value("add_prefix_space", true) ? "always" : "never"));
      return metaspacePreTokenizer(j.value("replacement", std::string("\xE2\x96\x81")), scheme != "never",
                                   j.value("split", true));
    }
    if (type == "Split") {
      if (j.value("invert", false)) fail("pre-tokenizer Split with invert is not supported");
      const auto behavior = j.value("behavior", std::string("Isolated"));
      SplitBehavior b;
      if (behavior == "Isolated") b = SplitBehavior::kIsolated;
      else if (behavior == "Removed") b = SplitBehavior::kRemoved;
      else if (behavior == "MergedWithPrevious") b = SplitBehavior::kMergedWithPrevious;
      else if (behavior == "MergedWithNext") b = SplitBehavior::kMergedWithNext;
      else fail("pre-tokenizer Split behavior '" + behavior + "' is not supported");
      return regexSplitPreTokenizer(regexOf(j.value("pattern", json())), b);
    }
    fail("unsupported pre_tokenizer '" + type + "'");
  }

  std::unordered_map<std::string, int32_t> vocabOf(const json& model) {
    const auto& v = model.value("vocab", json());
    if (!v.is_object()) fail("model.vocab must be an object of token -> id");
    std::unordered_map<std::string, int32_t> vocab;
    for (const auto& [token, id] : v.items()) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0) fail("model.vocab id of '" + token + "' is invalid");
      vocab.emplace(token, id.get<int32_t>());
    }
    return vocab;
  }

  void model(const json& m, Pipeline& p) {
    const auto type = m.value("type", std::string(m.contains("merges") ? "BPE" : ""));
    if (type == "BPE") {
      for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (m.contains(key) && !m[key].is_null() && !m[key].get<std::string>().empty())
          fail(std::string("BPE '") + key + "' is not supported");
      std::vector<std::pair<std::string, std::string>> merges;
      for (const auto& merge : m.value("merges", json::array())) {
        if (merge.is_string()) {
          const auto s = merge.get<std::string>();
          const auto space = s.find(' ');
          if (space == std::string::npos) fail("merge '" + s + "' is not 'left right'");
          merges.emplace_back(s.substr(0, space), s.substr(space + 1));
        } else if (merge.is_array() && merge.size() == 2) {
          merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
        } else {
          fail("malformed merge entry");
        }
      }
      BpeOptions options;
      if (m.contains("unk_token") && m["unk_token"].is_string()) options.unk_token = m["unk_token"].get<std::string>();
      options.byte_fallback = m.value("byte_fallback", false);
      options.ignore_merges = m.value("ignore_merges", false);
      auto bpe = std::make_shared<BpeModel>(vocabOf(m), merges, options, where_);
      if (p.byte_level) bpe->requireEveryByteSymbol(where_);
      p.model = [bpe](std::string_view w, std::vector<int32_t>& out, EncodeStats& s) { bpe->encode(w, out, s); };
      p.model_vocab_size = bpe->vocabSize();
      p.description = std::string(p.byte_level ? "byte-level BPE" : "BPE") +
                      (options.byte_fallback ? " with byte fallback" : "") + " (tokenizer.json)";
      return;
    }
    if (type == "WordPiece") {
      WordPieceOptions options;
      options.unk_token = m.value("unk_token", options.unk_token);
      options.continuing_prefix = m.value("continuing_subword_prefix", options.continuing_prefix);
      options.max_chars_per_word = m.value("max_input_chars_per_word", options.max_chars_per_word);
      auto wp = std::make_shared<WordPieceModel>(vocabOf(m), options, where_);
      p.model = [wp](std::string_view w, std::vector<int32_t>& out, EncodeStats& s) { wp->encode(w, out, s); };
      p.model_vocab_size = wp->vocabSize();
      p.description = "WordPiece (tokenizer.json)";
      return;
    }
    fail("unsupported model type '" + type + "' (supported: BPE, WordPiece)");
  }

  // The special tokens a single sequence gets, for analysis framing.
  Framing postProcessor(const json& j, const std::vector<AddedToken>& added) {
    Framing f;
    const auto type = typeOf(j);
    auto idOfPair = [&](const json& pair) {
      if (!pair.is_array() || pair.size() != 2) fail(type + ": expected [token, id]");
      return pair[1].get<int32_t>();
    };
    if (type == "BertProcessing" || type == "RobertaProcessing") {
      f.prefix.push_back(idOfPair(j.value("cls", json())));
      f.suffix.push_back(idOfPair(j.value("sep", json())));
    } else if (type == "TemplateProcessing") {
      const auto& specials = j.value("special_tokens", json::object());
      bool seen_sequence = false;
      for (const auto& piece : j.value("single", json::array())) {
        if (piece.contains("Sequence")) {
          seen_sequence = true;
        } else if (piece.contains("SpecialToken")) {
          const auto name = piece["SpecialToken"].value("id", std::string());
          const auto& entry = specials.value(name, json());
          for (const auto& id : entry.value("ids", json::array())) (seen_sequence ? f.suffix : f.prefix).push_back(id.get<int32_t>());
        }
      }
    } else if (type == "Sequence") {
      for (const auto& s : j.value("processors", json::array())) {
        auto inner = postProcessor(s, added);
        f.prefix.insert(f.prefix.end(), inner.prefix.begin(), inner.prefix.end());
        f.suffix.insert(f.suffix.end(), inner.suffix.begin(), inner.suffix.end());
      }
    }
    return f;  // ByteLevel and none add nothing
  }

  std::filesystem::path file_;
  std::string where_;
};

}  // namespace

std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path& file) {
  try {
    return Parser(file).parse();
  } catch (const nlohmann::json::exception& e) {
    // A value of the wrong type or a missing key anywhere in the file (found by fuzzing).
    throw InputError(file.string(), "not a tokenizer.json posgeom can read: " + io::jsonErrorMessage(e));
  }
}

}  // namespace posgeom::tokenize
