#pragma once
// HTTP on libcurl for the hub client: one request at a time per client (a client per
// thread), headers read case-insensitively, bodies kept in memory (bounded) or streamed
// to a sink. Transport failures (no answer, a stalled or cut transfer) are thrown as
// TransportError; any HTTP status is returned for the caller to judge.
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace posgeom::hub {

class TransportError : public std::runtime_error {
 public:
  // `transient`: worth another try (a timeout, a cut or empty answer), as against a host
  // that cannot be found or reached at all.
  explicit TransportError(const std::string& what, bool transient = false) : std::runtime_error(what), transient_(transient) {}
  bool transient() const { return transient_; }

 private:
  bool transient_;
};

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  bool head = false;
  bool follow_redirects = false;     // to the file store; never for the hub's own metadata
  int64_t range_from = -1;           // >= 0: "Range: bytes=<from>-"
  long connect_timeout_s = 10;
  long total_timeout_s = 0;          // 0: none (a download); else the whole request
  long stall_timeout_s = 0;          // > 0: fail when no byte arrives for this long
  std::size_t max_body = 16u << 20;  // a body kept in memory (not streamed) beyond this is refused
  // When set, a 2xx body goes here instead of into `body`; returning false stops the
  // transfer. An exception thrown here (or by on_start) is rethrown by perform().
  std::function<bool(const char* data, std::size_t size)> sink;
  // Called once before a 2xx body's first byte reaches the sink, with the status and
  // headers; returning false stops the transfer.
  std::function<bool(long status, const struct HttpResponse& response)> on_start;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; the last response's (after redirects)
  std::string body;                            // a kept body, or a non-2xx body's start
  std::string header(const std::string& lower_name) const;
};

class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  HttpResponse perform(const HttpRequest& request);

 private:
  void* curl_;
};

// The URL's scheme://host[:port], for deciding where a token may be sent.
std::string urlOrigin(const std::string& url);
// Percent-encodes a path segment (or a path, keeping its '/').
std::string urlEncoded(const std::string& text, bool keep_slashes);

}  // namespace posgeom::hub
