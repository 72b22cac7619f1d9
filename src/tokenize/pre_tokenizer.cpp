#include "posgeom/tokenize/pre_tokenizer.h"

#include "posgeom/tokenize/unicode.h"

namespace posgeom::tokenize {

const std::vector<std::string>& byteToUnicode() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      appendUtf8(t[static_cast<size_t>(b)], printable ? b : next++);
    }
    return t;
  }();
  return table;
}

std::string byteLevelEncode(std::string_view bytes) {
  const auto& table = byteToUnicode();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) out += table[b];
  return out;
}

PreTokenizer byteLevelPreTokenizer(bool add_prefix_space, std::shared_ptr<const Regex> split) {
  return [add_prefix_space, split](std::string_view text, bool, std::vector<std::string>& out) {
    std::string prefixed;
    if (add_prefix_space && !text.empty() && text.front() != ' ') {
      prefixed = " " + std::string(text);
      text = prefixed;
    }
    // Valid runs go through the regex; each invalid byte stands alone.
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t end = pos;
      while (end < text.size()) {
        std::size_t probe = end;
        if (decodeUtf8(text, probe) < 0) break;
        end = probe;
      }
      const auto run = text.substr(pos, end - pos);
      if (!split) {
        if (!run.empty()) out.push_back(byteLevelEncode(run));
      } else {
        for (const auto& [b, e] : split->findAll(run)) out.push_back(byteLevelEncode(run.substr(b, e - b)));
      }
      if (end < text.size()) out.push_back(byteLevelEncode(text.substr(end, 1)));
      pos = end + (end < text.size() ? 1 : 0);
    }
  };
}

PreTokenizer bertPreTokenizer() {
  return [](std::string_view text, bool, std::vector<std::string>& out) {
    std::string current;
    std::size_t pos = 0;
    auto flush = [&] {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
    };
    while (pos < text.size()) {
      const std::size_t start = pos;
      const int32_t cp = decodeUtf8(text, pos);
      if (cp >= 0 && isWhitespace(cp)) {
        flush();
      } else if (cp >= 0 && isPunctuation(cp)) {
        flush();
        out.emplace_back(text.substr(start, pos - start));
      } else {
        current.append(text.substr(start, pos - start));
      }
    }
    flush();
  };
}

PreTokenizer whitespaceSplitPreTokenizer() {
  return [](std::string_view text, bool, std::vector<std::string>& out) {
    std::string current;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t start = pos;
      const int32_t cp = decodeUtf8(text, pos);
      if (cp >= 0 && isWhitespace(cp)) {
        if (!current.empty()) out.push_back(std::move(current));
        current.clear();
      } else {
        current.append(text.substr(start, pos - start));
      }
    }
    if (!current.empty()) out.push_back(std::move(current));
  };
}

PreTokenizer metaspacePreTokenizer(const std::string& replacement, bool prepend, bool split) {
  return [replacement, prepend, split](std::string_view text, bool at_start, std::vector<std::string>& out) {
    std::string replaced;
    if (prepend && at_start && !text.empty() && text.front() != ' ') replaced = replacement;
    for (char c : text) {
      if (c == ' ')
        replaced += replacement;
      else
        replaced += c;
    }
    if (!split) {
      if (!replaced.empty()) out.push_back(std::move(replaced));
      return;
    }
    std::size_t start = 0;
    for (std::size_t p = replaced.find(replacement, 1); p != std::string::npos; p = replaced.find(replacement, p + 1)) {
      if (p > start) out.push_back(replaced.substr(start, p - start));
      start = p;
    }
    if (start < replaced.size()) out.push_back(replaced.substr(start));
  };
}

PreTokenizer regexSplitPreTokenizer(std::shared_ptr<const Regex> pattern, SplitBehavior behavior) {
  return [pattern, behavior](std::string_view text, bool, std::vector<std::string>& result) {
    std::vector<std::string> out;
    std::size_t last = 0;
    std::string pending;  // kMergedWithNext: a match waiting for the text after it
    auto emit = [&](std::string s) {
      if (!s.empty()) out.push_back(std::move(s));
    };
    for (const auto& [b, e] : pattern->findAll(text)) {
      std::string before(text.substr(last, b - last));
      std::string match(text.substr(b, e - b));
      switch (behavior) {
        case SplitBehavior::kIsolated: emit(pending + before); pending.clear(); emit(match); break;
        case SplitBehavior::kRemoved: emit(before); break;
        case SplitBehavior::kMergedWithPrevious:
          if (!before.empty() || out.empty())
            emit(before + match);
          else
            out.back() += match;
          break;
        case SplitBehavior::kMergedWithNext: emit(pending + before); pending = match; break;
      }
      last = e;
    }
    emit(pending + std::string(text.substr(last)));
    for (auto& piece : out) result.push_back(std::move(piece));
  };
}

PreTokenizer sequencePreTokenizer(std::vector<PreTokenizer> steps) {
  return [steps = std::move(steps)](std::string_view text, bool at_start, std::vector<std::string>& out) {
    std::vector<std::string> pieces{std::string(text)};
    for (const auto& step : steps) {
      std::vector<std::string> next;
      for (const auto& p : pieces) step(p, at_start, next);
      pieces = std::move(next);
    }
    for (auto& p : pieces) out.push_back(std::move(p));
  };
}

}  // namespace posgeom::tokenize
