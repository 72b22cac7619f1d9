#pragma once
// UTF-8 helpers over utf8proc: the Unicode data that normalizers and WordPiece need.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace posgeom::tokenize {

// Decodes one code point at `pos`; advances pos. Invalid bytes give -1 and advance by one.
int32_t decodeUtf8(std::string_view text, std::size_t& pos);
void appendUtf8(std::string& out, int32_t code_point);

// Replaces every invalid UTF-8 sequence with U+FFFD; adds the number of replacements.
std::string sanitizeUtf8(std::string_view text, std::size_t& replacements);
bool isValidUtf8(std::string_view text);

// Normal forms; input must be valid UTF-8.
std::string normalizeNfd(std::string_view text);
std::string normalizeNfc(std::string_view text);
std::string normalizeNfkc(std::string_view text);
std::string normalizeNfkd(std::string_view text);
std::string lowercase(std::string_view text);
// NFD, then drops combining marks (category Mn), as BERT's accent stripping does.
std::string stripAccents(std::string_view text);

bool isWhitespace(int32_t cp);    // BERT's: space, \t \n \r and category Zs
bool isControl(int32_t cp);       // BERT's: categories Cc, Cf, Cn, Co except \t \n \r
bool isPunctuation(int32_t cp);   // BERT's: ASCII non-alphanumeric printables and categories P*
bool isCjk(int32_t cp);           // the CJK Unified Ideograph blocks BERT isolates

}  // namespace posgeom::tokenize
