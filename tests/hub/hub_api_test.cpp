#include "posgeom/hub/hub_api.h"
#include "posgeom/hub/file_digest.h"

#include "input_error.h"
#include "local_hub.h"

namespace posgeom::testing {
namespace {

nlohmann::json repos() {
  const auto dir = defaultModelDir().string();
  return {{"org/default", {{"revisions", {{"main", dir}}}}},
          {"org/gated", {{"revisions", {{"main", dir}}}, {"gated", true}}},
          {"org/private", {{"revisions", {{"main", dir}}}, {"private", true}}}};
}

hub::HubSettings settingsOf(const LocalHub& hub, const std::string& token = "") {
  hub::HubSettings s;
  s.endpoint = hub.endpoint();
  s.token = token;
  s.token_source = token.empty() ? "" : "HF_TOKEN";
  return s;
}

TEST(HubApi, RevisionAndFileMetadata) {
  LocalHub hub(repos());
  hub::HubApi api(settingsOf(hub), "org/default");
  const auto rev = api.revision("main");
  EXPECT_TRUE(hub::isCommitId(rev.commit));
  EXPECT_NE(std::find(rev.files.begin(), rev.files.end(), "model.safetensors"), rev.files.end());
  const auto lfs = api.file(rev.commit, "model.safetensors");
  EXPECT_EQ(lfs.commit, rev.commit);
  EXPECT_EQ(lfs.etag, hub::fileDigest(defaultModelDir() / "model.safetensors", hub::DigestKind::kSha256));
  EXPECT_EQ(lfs.size, static_cast<int64_t>(std::filesystem::file_size(defaultModelDir() / "model.safetensors")));
  EXPECT_NE(lfs.location.find("/cdn/"), std::string::npos);
  const auto small = api.file(rev.commit, "config.json");
  EXPECT_EQ(small.etag, hub::fileDigest(defaultModelDir() / "config.json", hub::DigestKind::kGitBlob));
  EXPECT_EQ(small.location.rfind(hub.endpoint() + "/org/default/resolve/", 0), 0u);
}

TEST(HubApi, EachRefusalIsOneLineSayingWhatToDo) {
  LocalHub hub(repos());
  EXPECT_INPUT_ERROR(hub::HubApi(settingsOf(hub), "org/absent").revision("main"), "org/absent: no such model on " + hub.endpoint());
  EXPECT_INPUT_ERROR(hub::HubApi(settingsOf(hub), "org/private").revision("main"), "org/private: no such model");
  EXPECT_INPUT_ERROR(hub::HubApi(settingsOf(hub), "org/default").revision("v9"),
                     "--revision: 'v9' is not a branch, tag or commit of org/default");
  const std::string commit = hub::HubApi(settingsOf(hub), "org/default").revision("main").commit;
  hub::HubApi gated(settingsOf(hub), "org/gated");
  const auto gated_commit = gated.revision("main").commit;  // a gated model's listing is public, as on the hub
  const std::string no_token = inputErrorOf([&] { gated.file(gated_commit, "config.json"); });
  EXPECT_EQ(no_token.rfind("org/gated: a gated model", 0), 0u) << no_token;
  EXPECT_NE(no_token.find("HF_TOKEN"), std::string::npos) << no_token;
  const std::string wrong = inputErrorOf([&] { hub::HubApi(settingsOf(hub, "hf_wrong"), "org/gated").file(gated_commit, "config.json"); });
  EXPECT_NE(wrong.find("may not read"), std::string::npos) << wrong;
  EXPECT_INPUT_ERROR(hub::HubApi(settingsOf(hub), "org/default").file(commit, "absent.json"), "org/default: absent.json is not in the repository");
  for (const auto& m : {no_token, wrong}) EXPECT_EQ(m.find('\n'), std::string::npos);
  // With the token, the private and gated repositories answer.
  EXPECT_NO_THROW(hub::HubApi(settingsOf(hub, LocalHub::kToken), "org/private").revision("main"));
  EXPECT_NO_THROW(hub::HubApi(settingsOf(hub, LocalHub::kToken), "org/gated").file(gated_commit, "config.json"));
}

TEST(HubApi, NoNetworkIsSaidWithTheEndpoint) {
  hub::HubSettings s;
  s.endpoint = "http://127.0.0.1:" + std::to_string(freePort());
  EXPECT_INPUT_ERROR(hub::HubApi(s, "org/m").revision("main"), "org/m: cannot reach " + s.endpoint);
}

TEST(HubApi, TheTokenGoesToTheHubOnly) {
  hub::HubSettings s;
  s.endpoint = "https://huggingface.co";
  s.token = "hf_x";
  const hub::HubApi api(s, "org/m");
  EXPECT_EQ(api.headersFor("https://huggingface.co/org/m/resolve/main/config.json"),
            std::vector<std::string>{"Authorization: Bearer hf_x"});
  EXPECT_TRUE(api.headersFor("https://cdn-lfs.hf.co/repos/ab/cd").empty());
}

TEST(HubApi, HubNames) {
  for (const char* ok : {"gpt2", "meta-llama/Llama-3.1-8B", "EleutherAI/pythia-70m", "a_b.c/d-e"}) EXPECT_TRUE(hub::isHubName(ok)) << ok;
  for (const char* bad : {"", "/abs", "a/b/c", "../x", "a/..", "a--b/c", "a b", "./m", "org/"}) EXPECT_FALSE(hub::isHubName(bad)) << bad;
}

}  // namespace
}  // namespace posgeom::testing
