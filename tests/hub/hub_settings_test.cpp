#include "posgeom/hub/hub_settings.h"

#include "local_hub.h"
#include "posgeom/base/error.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(HubSettings, DefaultsAreHuggingFacesOwn) {
  const auto s = hub::hubSettings(envOf({{"HOME", "/nonexistent-home"}}));
  EXPECT_EQ(s.endpoint, "https://huggingface.co");
  EXPECT_FALSE(s.offline);
  EXPECT_TRUE(s.token.empty());
  EXPECT_EQ(s.cache, fs::path("/nonexistent-home/.cache/huggingface/hub"));
  EXPECT_EQ(hub::tokenFile(envOf({{"HOME", "/h"}})), fs::path("/h/.cache/huggingface/token"));
  EXPECT_EQ(hub::tokenFile(envOf({{"HF_HOME", "/hf"}})), fs::path("/hf/token"));
  EXPECT_EQ(hub::tokenFile(envOf({{"HF_HOME", "/hf"}, {"HF_TOKEN_PATH", "/t"}})), fs::path("/t"));
}

TEST(HubSettings, EndpointOfflineAndTimeoutsFromTheEnvironment) {
  const auto s = hub::hubSettings(envOf({{"HF_ENDPOINT", "http://mirror.local:8080//"}, {"HF_HUB_OFFLINE", "yes"},
                                         {"HF_HUB_ETAG_TIMEOUT", "3"}, {"HF_HUB_DOWNLOAD_TIMEOUT", "2.5"}, {"HOME", "/x"}}));
  EXPECT_EQ(s.endpoint, "http://mirror.local:8080");
  EXPECT_TRUE(s.offline);
  EXPECT_EQ(s.metadata_timeout_s, 3);
  EXPECT_EQ(s.stall_timeout_s, 3);  // rounded to whole seconds
  for (const char* off : {"0", "no", "false", "off"}) EXPECT_FALSE(hub::hubSettings(envOf({{"HF_HUB_OFFLINE", off}})).offline) << off;
}

TEST(HubSettings, TokenFromTheVariableBeforeTheFile) {
  ScratchDir s;
  writeFile(s / "token", "  hf_from_file\n");
  const auto from_file = hub::hubSettings(envOf({{"HF_TOKEN_PATH", (s / "token").string()}}));
  EXPECT_EQ(from_file.token, "hf_from_file");
  EXPECT_EQ(from_file.token_source, (s / "token").string());
  const auto from_var = hub::hubSettings(envOf({{"HF_TOKEN_PATH", (s / "token").string()}, {"HF_TOKEN", "hf_var"}}));
  EXPECT_EQ(from_var.token, "hf_var");
  EXPECT_EQ(from_var.token_source, "HF_TOKEN");
  EXPECT_NE(hub::tokenAdvice(from_var).find("HF_TOKEN"), std::string::npos);
}

TEST(HubSettings, UnusableValuesNameTheirVariable) {
  ScratchDir s;
  writeFile(s / "token", "two\nlines");
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { hub::hubSettings(envOf({{"HF_TOKEN_PATH", (s / "token").string()}})); }).rfind((s / "token").string(), 0), 0u);
  EXPECT_EQ(message([] { hub::hubSettings(envOf({{"HF_ENDPOINT", "ftp://x"}})); }).rfind("HF_ENDPOINT: ", 0), 0u);
  EXPECT_EQ(message([] { hub::hubSettings(envOf({{"HF_HUB_ETAG_TIMEOUT", "soon"}})); }).rfind("HF_HUB_ETAG_TIMEOUT: ", 0), 0u);
  EXPECT_EQ(message([] { hub::hubSettings(envOf({{"HF_HUB_DOWNLOAD_TIMEOUT", "-1"}})); }).rfind("HF_HUB_DOWNLOAD_TIMEOUT: ", 0), 0u);
  // A line break in the token would be a second HTTP header.
  EXPECT_EQ(message([] { hub::hubSettings(envOf({{"HF_TOKEN", "hf_x\r\nX-Evil: 1"}})); }).rfind("HF_TOKEN: holds spaces or control", 0), 0u);
  EXPECT_EQ(hub::hubSettings(envOf({{"HF_TOKEN", "  "}, {"HF_TOKEN_PATH", (s / "absent").string()}})).token, "");  // blank: unset
}

TEST(HubSettings, EndpointsAreSaidWithoutTheirPassword) {
  EXPECT_EQ(hub::shownUrl("https://user:s3cret@mirror.local/x"), "https://***@mirror.local/x");
  EXPECT_EQ(hub::shownUrl("https://token@mirror.local"), "https://***@mirror.local");
  EXPECT_EQ(hub::shownUrl("https://u:p@ss@mirror.local:1/x@y"), "https://***@mirror.local:1/x@y");
  EXPECT_EQ(hub::shownUrl("https://mirror.local/a@b"), "https://mirror.local/a@b");
  EXPECT_EQ(hub::hubSettings(envOf({{"HF_ENDPOINT", "HTTPS://Mirror.local"}})).endpoint, "https://Mirror.local");
}

}  // namespace
}  // namespace posgeom::testing
