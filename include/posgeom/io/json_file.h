#pragma once
// JSON files with errors that name the file, and typed access to config keys.
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace posgeom::io {

// Throws InputError("<path>: ...") when unreadable or not valid JSON (with the byte position).
nlohmann::json readJsonFile(const std::filesystem::path& path);

// A config.json read with its path kept for messages. Keys may have aliases
// (GPT-2's n_embd is BERT's hidden_size); the first present one is used.
// nlohmann's message without its "[json.exception.type_error.302] " prefix: for the
// InputError when a file's JSON has the wrong shape for its reader.
std::string jsonErrorMessage(const nlohmann::json::exception& e);

class JsonConfig {
 public:
  JsonConfig(nlohmann::json json, std::filesystem::path path) : json_(std::move(json)), path_(std::move(path)) {}
  static JsonConfig load(const std::filesystem::path& path);

  int64_t requirePositiveInt(std::initializer_list<const char*> keys) const;
  int64_t positiveInt(std::initializer_list<const char*> keys, int64_t fallback) const;
  double requireNumber(std::initializer_list<const char*> keys) const;
  double number(std::initializer_list<const char*> keys, double fallback) const;
  std::string string(std::initializer_list<const char*> keys, const std::string& fallback) const;
  bool boolean(std::initializer_list<const char*> keys, bool fallback) const;
  bool has(const char* key) const;

  const nlohmann::json& json() const { return json_; }
  const std::filesystem::path& path() const { return path_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  // The first alias that is present and not null, or nullptr.
  const nlohmann::json* find(std::initializer_list<const char*> keys) const;
  static std::string describe(std::initializer_list<const char*> keys);
  nlohmann::json json_;
  std::filesystem::path path_;
};

}  // namespace posgeom::io
