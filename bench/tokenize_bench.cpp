// Tokenization throughput in MB/s on one core, per tokenizer and corpus.
// Usage: posgeom_bench_tokenize [SHARED_DIR]   (default ../shared beside the checkout)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "posgeom/tokenize/tokenizer.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  const fs::path shared = argc > 1 ? fs::path(argv[1]) : fs::path(POSGEOM_SOURCE_DIR).parent_path() / "shared";
  const std::vector<std::pair<std::string, fs::path>> corpora{
      {"tinyshakespeare", shared / "data/corpora/tinyshakespeare.txt"},
      {"github-topics", shared / "data/corpora/topics"}};
  std::printf("%-16s %-18s %10s %10s %10s\n", "tokenizer", "corpus", "MB", "tokens", "MB/s/core");
  for (const char* name : {"gpt2", "llama2", "bert-base-uncased"}) {
    const auto tokenizer = posgeom::tokenize::loadTokenizer(shared / "data/tokenizers" / name);
    for (const auto& [label, path] : corpora) {
      std::string text;
      std::vector<fs::path> files;
      if (fs::is_directory(path)) {
        for (const auto& e : fs::directory_iterator(path))
          if (e.path().filename().string().rfind("github", 0) == 0) files.push_back(e.path());
      } else {
        files.push_back(path);
      }
      std::vector<std::string> texts;
      double bytes = 0;
      for (const auto& f : files) {
        std::ifstream in(f);
        std::stringstream s;
        s << in.rdbuf();
        texts.push_back(s.str());
        bytes += static_cast<double>(texts.back().size());
      }
      // Two passes: the first warms the word cache as a long corpus would; the second is timed.
      std::size_t tokens = 0;
      posgeom::tokenize::EncodeStats stats;
      for (const auto& t : texts) tokens = tokenizer->encode(t, stats).size();
      const auto start = std::chrono::steady_clock::now();
      tokens = 0;
      for (const auto& t : texts) tokens += tokenizer->encode(t, stats).size();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%-16s %-18s %10.2f %10zu %10.1f\n", name, label.c_str(), bytes / 1e6, tokens, bytes / 1e6 / seconds);
    }
  }
  return 0;
}
