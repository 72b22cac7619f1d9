#include "posgeom/tokenize/normalizer.h"

#include "posgeom/tokenize/unicode.h"

namespace posgeom::tokenize {

Normalizer bertNormalizer(BertNormalizerOptions o) {
  return [o](std::string text, bool) {
    if (o.clean_text || o.handle_chinese_chars) {
      std::string out;
      out.reserve(text.size());
      std::size_t pos = 0;
      while (pos < text.size()) {
        const int32_t cp = decodeUtf8(text, pos);
        if (o.clean_text && (cp <= 0 || cp == 0xFFFD || isControl(cp))) continue;
        if (o.clean_text && isWhitespace(cp)) {
          out += ' ';
        } else if (o.handle_chinese_chars && isCjk(cp)) {
          out += ' ';
          appendUtf8(out, cp);
          out += ' ';
        } else {
          appendUtf8(out, cp);
        }
      }
      text = std::move(out);
    }
    if (o.strip_accents) text = stripAccents(text);
    if (o.lowercase) text = lowercase(text);
    return text;
  };
}

Normalizer sequenceNormalizer(std::vector<Normalizer> steps) {
  return [steps = std::move(steps)](std::string text, bool at_start) {
    for (const auto& s : steps) text = s(std::move(text), at_start);
    return text;
  };
}

Normalizer lowercaseNormalizer() {
  return [](std::string text, bool) { return lowercase(text); };
}

Normalizer stripAccentsNormalizer() {
  return [](std::string text, bool) { return stripAccents(text); };
}

Normalizer unicodeNormalizer(const std::string& form) {
  using Fn = std::string (*)(std::string_view);
  Fn fn = form == "NFC" ? &normalizeNfc : form == "NFD" ? &normalizeNfd : form == "NFKC" ? &normalizeNfkc : &normalizeNfkd;
  return [fn](std::string text, bool) { return fn(text); };
}

Normalizer prependNormalizer(const std::string& prefix) {
  return [prefix](std::string text, bool at_start) { return at_start && !text.empty() ? prefix + text : text; };
}

Normalizer replaceNormalizer(const std::string& pattern, const std::string& content) {
  return [pattern, content](std::string text, bool) {
    if (pattern.empty()) return text;
    std::string out;
    out.reserve(text.size());
    std::size_t start = 0;
    for (std::size_t p = text.find(pattern); p != std::string::npos; p = text.find(pattern, start)) {
      out.append(text, start, p - start);
      out += content;
      start = p + pattern.size();
    }
    out.append(text, start, std::string::npos);
    return out;
  };
}

}  // namespace posgeom::tokenize
