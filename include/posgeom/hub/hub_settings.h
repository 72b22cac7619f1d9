#pragma once
// The Hugging Face Hub's conventions, read as huggingface_hub reads them, so that one
// environment drives transformers and posgeom alike: HF_ENDPOINT, HF_TOKEN or the token
// file, HF_HUB_OFFLINE, the cache root and the timeouts.
#include <filesystem>
#include <string>

#include "posgeom/base/environment.h"

namespace posgeom::hub {

struct HubSettings {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT, without a trailing '/'
  std::string token;                                // HF_TOKEN, else the token file; empty: none
  std::string token_source;                         // "HF_TOKEN" or the token file's path
  bool offline = false;                             // HF_HUB_OFFLINE=1: never open a connection
  std::filesystem::path cache;                      // io::hubCacheRoot: HF_HUB_CACHE, else $HF_HOME/hub, ...
  long metadata_timeout_s = 10;                     // HF_HUB_ETAG_TIMEOUT: an API call or a file's headers
  long stall_timeout_s = 10;                        // HF_HUB_DOWNLOAD_TIMEOUT: a download without a byte for this long
};

// HF_HUB_OFFLINE alone, as huggingface_hub spells it true ("1", "ON", "YES", "TRUE").
bool offlineMode(const EnvLookup& env);

// The token file: $HF_TOKEN_PATH, else $HF_HOME/token ($XDG_CACHE_HOME/huggingface/token,
// ~/.cache/huggingface/token where HF_HOME is unset).
std::filesystem::path tokenFile(const EnvLookup& env);
// InputError naming the variable or the token file when a value is unusable (a
// timeout that is not a positive number, a token file that cannot be read).
HubSettings hubSettings(const EnvLookup& env);

// A URL as said in messages and logs: its user information ("user:pass@", "token@") as ***.
std::string shownUrl(const std::string& url);

// What to tell a user who needs a token: where one is read from.
std::string tokenAdvice(const HubSettings& settings);

}  // namespace posgeom::hub
