#include "posgeom/hub/http_client.h"

#include "local_hub.h"

namespace posgeom::testing {
namespace {

hub::HttpRequest at(const std::string& url) {
  hub::HttpRequest r;
  r.url = url;
  return r;
}

nlohmann::json defaultRepo() { return oneRepo("org/default", defaultModelDir()); }

TEST(HttpClient, KeepsABodyAndReadsHeadersWhateverTheirCase) {
  LocalHub hub(defaultRepo());
  hub::HttpClient http;
  const auto r = http.perform(at(hub.endpoint() + "/api/models/org/default/revision/main"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(nlohmann::json::parse(r.body).at("id"), "org/default");
  EXPECT_EQ(r.header("content-type"), "application/json");
}

TEST(HttpClient, RedirectsFollowedOnlyWhenAsked) {
  LocalHub hub(defaultRepo());
  hub::HttpClient http;
  auto head = at(hub.endpoint() + "/org/default/resolve/main/model.safetensors");
  head.head = true;
  const auto r = http.perform(head);
  EXPECT_EQ(r.status, 302);
  EXPECT_NE(r.header("location").find("/cdn/"), std::string::npos);
  EXPECT_FALSE(r.header("x-linked-etag").empty());
  auto get = at(r.header("location"));
  std::string bytes;
  get.sink = [&](const char* d, std::size_t n) {
    bytes.append(d, n);
    return true;
  };
  EXPECT_EQ(http.perform(get).status, 200);
  EXPECT_EQ(bytes, readFile(defaultModelDir() / "model.safetensors"));
  get.url = head.url;
  get.follow_redirects = true;
  bytes.clear();
  EXPECT_EQ(http.perform(get).status, 200);
  EXPECT_EQ(bytes.size(), readFile(defaultModelDir() / "model.safetensors").size());
}

TEST(HttpClient, ARangeGivesTheRest) {
  LocalHub hub(defaultRepo());
  hub::HttpClient http;
  auto get = at(hub.endpoint() + "/org/default/resolve/main/config.json");
  get.range_from = 10;
  long started = 0;
  std::string bytes;
  get.on_start = [&](long status, const hub::HttpResponse& r) {
    started = status;
    return r.header("content-range").rfind("bytes 10-", 0) == 0;
  };
  get.sink = [&](const char* d, std::size_t n) {
    bytes.append(d, n);
    return true;
  };
  EXPECT_EQ(http.perform(get).status, 206);
  EXPECT_EQ(started, 206);
  EXPECT_EQ(bytes, readFile(defaultModelDir() / "config.json").substr(10));
}

TEST(HttpClient, TransportFailuresAndOversizedBodiesThrow) {
  LocalHub hub(defaultRepo());
  hub::HttpClient http;
  EXPECT_THROW(http.perform(at("http://127.0.0.1:" + std::to_string(freePort()) + "/")), hub::TransportError);
  auto small = at(hub.endpoint() + "/api/models/org/default");
  small.max_body = 16;
  EXPECT_THROW(http.perform(small), hub::TransportError);
  auto refused = at(hub.endpoint() + "/org/default/resolve/main/config.json");
  refused.sink = [](const char*, std::size_t) { return false; };
  EXPECT_THROW(http.perform(refused), hub::TransportError);
  // An error answer is returned, not thrown, with the start of its body.
  const auto missing = http.perform(at(hub.endpoint() + "/api/models/org/absent"));
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(missing.header("x-error-code"), "RepoNotFound");
}

TEST(HttpClient, OriginsAndEncoding) {
  EXPECT_EQ(hub::urlOrigin("https://HuggingFace.co/api/models?x=1"), "https://huggingface.co");
  EXPECT_EQ(hub::urlOrigin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
  EXPECT_NE(hub::urlOrigin("http://127.0.0.1:8080/a"), hub::urlOrigin("http://127.0.0.1:8081/a"));
  EXPECT_EQ(hub::urlEncoded("refs/pr/1", false), "refs%2Fpr%2F1");
  EXPECT_EQ(hub::urlEncoded("a b/c.json", true), "a%20b/c.json");
}

}  // namespace
}  // namespace posgeom::testing
