#include "test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <csignal>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace posgeom::testing {
namespace fs = std::filesystem;

namespace {
// No test reaches the real hub: every test process starts offline, its endpoint an address
// nobody serves and no token; the hub tests give the programs they start their local hub.
const bool kNeverTheRealHub = [] {
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  ::setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);
  ::setenv("HF_TOKEN_PATH", "/nonexistent/posgeom-tests/token", 1);
  ::unsetenv("HF_TOKEN");
  return true;
}();
}  // namespace

std::function<std::optional<std::string>(const char*)> envOf(std::map<std::string, std::string> vars) {
  return [vars](const char* key) -> std::optional<std::string> {
    const auto it = vars.find(key);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

fs::path hfFixtureDir(const std::string& name) { return fs::path(POSGEOM_SOURCE_DIR) / "tests" / "fixtures" / "hf" / name; }

fs::path editedHfFixture(const fs::path& dir, const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  const auto copy = dir / "m";
  fs::copy(hfFixtureDir(name), copy, fs::copy_options::recursive);
  auto config = nlohmann::json::parse(readFile(copy / "config.json"));
  edit(config);
  writeFile(copy / "config.json", config.dump(2));
  return copy;
}

fs::path realModelDir(const std::string& name) {
  const char* env = std::getenv("POSGEOM_REAL_MODELS");
  const fs::path dir = (env && *env ? fs::path(env) : fs::path(POSGEOM_SOURCE_DIR) / ".cache" / "models") / name;
  std::error_code ec;
  return fs::exists(dir / ".complete", ec) ? dir : fs::path();
}

fs::path sharedDir() {
  if (const char* env = std::getenv("POSGEOM_SHARED"); env && *env) return fs::path(env);
  const fs::path beside = fs::path(POSGEOM_SOURCE_DIR).parent_path() / "shared";
  return fs::exists(beside) ? beside : fs::path();
}

bool runningInCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

ScratchDir::ScratchDir() {
  std::random_device rd;
  path_ = fs::temp_directory_path() / ("posgeom-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string safetensorsBytes(const std::string& header, const std::string& data, long long claimed_length) {
  const auto n = static_cast<unsigned long long>(claimed_length >= 0 ? claimed_length : static_cast<long long>(header.size()));
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

namespace {
uint64_t headerLength(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes.at(static_cast<size_t>(i)));
  return n;
}
}  // namespace

void rewriteSafetensorsHeader(const fs::path& path, const std::function<void(nlohmann::json&)>& edit) {
  const auto bytes = readFile(path);
  const auto n = headerLength(bytes);
  auto header = nlohmann::json::parse(bytes.substr(8, n));
  edit(header);
  writeFile(path, safetensorsBytes(header.dump(), bytes.substr(8 + n)));
}

void fillF32Tensor(const fs::path& path, const std::string& name, float value) {
  auto bytes = readFile(path);
  const auto n = headerLength(bytes);
  const auto entry = nlohmann::json::parse(bytes.substr(8, n)).at(name);
  if (entry.at("dtype") != "F32") throw std::invalid_argument(name + " is not F32");
  const auto begin = entry.at("data_offsets")[0].get<size_t>(), end = entry.at("data_offsets")[1].get<size_t>();
  for (size_t at = begin; at < end; at += sizeof(float)) std::memcpy(&bytes[8 + n + at], &value, sizeof(float));
  writeFile(path, bytes);
}

fs::path copyFixtureModel(const std::string& name, const fs::path& into) {
  const fs::path target = into / name;
  fs::copy(sharedDir() / "fixtures" / "models" / name, target, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(target))
    fs::permissions(e.path(), fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::add);
  fs::permissions(target, fs::perms::owner_all, fs::perm_options::add);
  return target;
}

CommandResult runPosgeom(const std::vector<std::string>& args, const std::string& stdin_text) {
  return runProgram(POSGEOM_BINARY, args, stdin_text);
}

RunningProgram::RunningProgram(const std::string& program, const std::vector<std::string>& args, const std::string& stdin_text,
                               const Environment& env)
    : scratch_(std::make_unique<ScratchDir>()) {
  const auto out_path = *scratch_ / "stdout", err_path = *scratch_ / "stderr", in_path = *scratch_ / "stdin";
  writeFile(in_path, stdin_text);
  pid_ = ::fork();
  if (pid_ == 0) {
    std::vector<std::string> argv_storage{program};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    if (!std::freopen(in_path.c_str(), "r", stdin) || !std::freopen(out_path.c_str(), "w", stdout) ||
        !std::freopen(err_path.c_str(), "w", stderr))
      _exit(127);
    ::execv(program.c_str(), argv.data());
    _exit(127);
  }
}

RunningProgram::~RunningProgram() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait();
  }
}

void RunningProgram::signal(int sig) { ::kill(pid_, sig); }

CommandResult RunningProgram::wait() {
  int status = 0;
  rusage usage{};
  ::wait4(pid_, &status, 0, &usage);
  pid_ = -1;
  CommandResult r;
  r.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = readFile(*scratch_ / "stdout");
  r.err = readFile(*scratch_ / "stderr");
  return r;
}

int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw std::runtime_error("no free port");
  ::close(fd);
  return ntohs(address.sin_port);
}

LaunchedRanks::LaunchedRanks(int world, const std::function<std::vector<std::string>(int rank)>& args_of) {
  const std::string port = std::to_string(freePort());
  for (int r = 0; r < world; ++r)
    ranks_.push_back(std::make_unique<RunningProgram>(
        POSGEOM_BINARY, args_of(r), "",
        Environment{{"RANK", std::to_string(r)}, {"WORLD_SIZE", std::to_string(world)}, {"LOCAL_RANK", std::to_string(r)},
                    {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}}));
}

std::vector<CommandResult> LaunchedRanks::wait() {
  std::vector<CommandResult> results;
  for (auto& r : ranks_) results.push_back(r->wait());
  return results;
}

CommandResult runProgram(const std::string& program, const std::vector<std::string>& args, const std::string& stdin_text) {
  return RunningProgram(program, args, stdin_text).wait();
}

}  // namespace posgeom::testing
