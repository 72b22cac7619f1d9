#include "posgeom/hub/hub_settings.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "posgeom/base/error.h"
#include "posgeom/io/hub_cache.h"

namespace posgeom::hub {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kTokenBytesRead = 4096;

std::string trimmed(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

}  // namespace

std::string shownUrl(const std::string& url) {
  const auto scheme = url.find("://");
  const auto start = scheme == std::string::npos ? 0 : scheme + 3;
  const auto authority_end = std::min(url.find_first_of("/?#", start), url.size());
  const auto at = url.rfind('@', authority_end == 0 ? 0 : authority_end - 1);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + "***" + url.substr(at);  // a token as the user name is as secret as a password
}

namespace {

// huggingface_hub's truthy spellings ("1", "ON", "YES", "TRUE", any case).
bool truthy(const std::string& value) {
  std::string v = trimmed(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return v == "1" || v == "ON" || v == "YES" || v == "TRUE";
}

long seconds(const EnvLookup& env, const char* key, long fallback) {
  const auto v = env(key);
  if (!v) return fallback;
  try {
    std::size_t used = 0;
    const double s = std::stod(*v, &used);
    if (used == v->size() && s > 0 && s < 1e6) return std::max(1L, static_cast<long>(s + 0.5));
  } catch (const std::exception&) {
  }
  throw InputError(key, "is '" + v->substr(0, 32) + "', not a positive number of seconds");
}

// A token goes into an HTTP header: printable ASCII without spaces, nothing else.
bool printableWord(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; });
}

// One token per file, as `hf auth login` writes it; surrounding space ignored.
std::string readToken(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return "";
  if (!fs::is_regular_file(file, ec)) throw InputError(file.string(), "is not a file holding a Hugging Face token");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), std::string("cannot be read: ") + std::strerror(errno) + " (it should hold your Hugging Face token)");
  std::string text(kTokenBytesRead + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw InputError(file.string(), "cannot be read");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kTokenBytesRead) throw InputError(file.string(), "is too long to be a Hugging Face token");
  text = trimmed(text);
  if (!printableWord(text)) throw InputError(file.string(), "holds spaces or control characters inside: it should hold one Hugging Face token");
  return text;
}

}  // namespace

bool offlineMode(const EnvLookup& env) {
  const auto v = env("HF_HUB_OFFLINE");
  return v && truthy(*v);
}

fs::path tokenFile(const EnvLookup& env) {
  if (auto v = env("HF_TOKEN_PATH")) return io::expandedUser(*v, env);
  return io::huggingFaceHome(env) / "token";
}

HubSettings hubSettings(const EnvLookup& env) {
  HubSettings s;
  if (auto v = env("HF_ENDPOINT")) {
    s.endpoint = trimmed(*v);
    while (!s.endpoint.empty() && s.endpoint.back() == '/') s.endpoint.pop_back();
    const auto scheme = s.endpoint.find("://");
    std::string lowered = s.endpoint.substr(0, scheme == std::string::npos ? 0 : scheme);
    std::transform(lowered.begin(), lowered.end(), lowered.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if ((lowered != "http" && lowered != "https") || s.endpoint.size() <= scheme + 3)
      throw InputError("HF_ENDPOINT", "is '" + shownUrl(s.endpoint).substr(0, 64) + "', not an http:// or https:// address");
    s.endpoint = lowered + s.endpoint.substr(scheme);
  }
  if (auto v = env("HF_TOKEN"); v && !trimmed(*v).empty()) {  // blank counts as unset, as for huggingface_hub
    s.token = trimmed(*v);
    s.token_source = "HF_TOKEN";
    if (!printableWord(s.token)) throw InputError("HF_TOKEN", "holds spaces or control characters inside: it should hold one Hugging Face token");
  } else {
    const auto file = tokenFile(env);
    s.token = readToken(file);
    if (!s.token.empty()) s.token_source = file.string();
  }
  s.offline = offlineMode(env);
  s.cache = io::hubCacheRoot(env);
  s.metadata_timeout_s = seconds(env, "HF_HUB_ETAG_TIMEOUT", s.metadata_timeout_s);
  s.stall_timeout_s = seconds(env, "HF_HUB_DOWNLOAD_TIMEOUT", s.stall_timeout_s);
  return s;
}

std::string tokenAdvice(const HubSettings& settings) {
  if (!settings.token.empty()) return "the token from " + settings.token_source;
  return "set HF_TOKEN (or the token file `hf auth login` writes)";
}

}  // namespace posgeom::hub
