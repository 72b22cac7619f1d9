#include "posgeom/hub/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <mutex>

namespace posgeom::hub {
namespace {

constexpr std::size_t kErrorBodyKept = 4096;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string headerTrimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  const HttpRequest* request;
  HttpResponse* response;
  CURL* curl;
  bool sink_refused = false;
  bool too_big = false;
  bool started = false;
  std::exception_ptr thrown;  // by a caller's callback: never unwound through libcurl's C frames
};

// Each response of a redirect chain starts with its status line: headers restart there.
size_t onHeader(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    t.response->headers.clear();
  } else if (const auto colon = line.find(':'); colon != std::string::npos) {
    t.response->headers[lower(headerTrimmed(line.substr(0, colon)))] = headerTrimmed(line.substr(colon + 1));
  }
  return size * count;
}

size_t keptBody(Transfer& t, char* data, std::size_t n);

size_t onBody(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  try {
    return keptBody(t, data, size * count);
  } catch (...) {
    t.thrown = std::current_exception();
    return 0;
  }
}

size_t keptBody(Transfer& t, char* data, std::size_t n) {
  long status = 0;
  curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &status);
  const bool ok = status >= 200 && status < 300;
  if (ok && t.request->sink) {
    if (!t.started) {
      t.started = true;
      if (t.request->on_start && !t.request->on_start(status, *t.response)) {
        t.sink_refused = true;
        return 0;
      }
    }
    if (t.request->sink(data, n)) return n;
    t.sink_refused = true;
    return 0;
  }
  const std::size_t limit = ok ? t.request->max_body : kErrorBodyKept;
  if (t.response->body.size() + n > limit) {
    if (ok) {
      t.too_big = true;
      return 0;
    }
    t.response->body.append(data, limit - std::min(limit, t.response->body.size()));
    return n;  // an error page's start is enough
  }
  t.response->body.append(data, n);
  return n;
}

}  // namespace

std::string HttpResponse::header(const std::string& lower_name) const {
  const auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

HttpClient::HttpClient() {
  globalInit();
  curl_ = curl_easy_init();
  if (curl_ == nullptr) throw TransportError("libcurl could not start a session");
}

HttpClient::~HttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

HttpResponse HttpClient::perform(const HttpRequest& request) {
  auto* curl = static_cast<CURL*>(curl_);
  curl_easy_reset(curl);
  HttpResponse response;
  Transfer transfer{&request, &response, curl, false, false, false, nullptr};
  char error[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  headers = curl_slist_append(headers, "Accept-Encoding: identity");  // sizes are the file's own
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "posgeom/" POSGEOM_VERSION);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, request.follow_redirects ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, request.connect_timeout_s);
  if (request.total_timeout_s > 0) curl_easy_setopt(curl, CURLOPT_TIMEOUT, request.total_timeout_s);
  if (request.stall_timeout_s > 0) {
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, request.stall_timeout_s);
  }
  if (request.head) curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  const std::string range = request.range_from >= 0 ? std::to_string(request.range_from) + "-" : "";
  if (!range.empty()) curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  if (transfer.thrown) std::rethrow_exception(transfer.thrown);
  if (transfer.too_big) throw TransportError("the answer is larger than " + std::to_string(request.max_body) + " bytes");
  if (transfer.sink_refused) throw TransportError("the transfer was stopped");
  if (code != CURLE_OK) {
    const bool transient = code != CURLE_COULDNT_RESOLVE_HOST && code != CURLE_COULDNT_RESOLVE_PROXY && code != CURLE_COULDNT_CONNECT &&
                           code != CURLE_UNSUPPORTED_PROTOCOL && code != CURLE_URL_MALFORMAT && code != CURLE_TOO_MANY_REDIRECTS && code != CURLE_SSL_CACERT_BADFILE &&
                           code != CURLE_PEER_FAILED_VERIFICATION;
    throw TransportError(error[0] ? std::string(error) : std::string(curl_easy_strerror(code)), transient);
  }
  return response;
}

std::string urlOrigin(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  const auto path = url.find_first_of("/?#", scheme + 3);
  return lower(url.substr(0, path));
}

std::string urlEncoded(const std::string& text, bool keep_slashes) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slashes && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace posgeom::hub
