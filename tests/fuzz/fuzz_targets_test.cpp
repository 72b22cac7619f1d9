// The fuzz targets of fuzz/ on their seeds and on every input that once crashed them
// (fuzz/regressions/<target>/): each must be refused with an InputError or accepted,
// never crash, under the sanitizer build too.
#include <filesystem>
#include <map>

#include "fuzz_target.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

using Target = void (*)(const uint8_t*, std::size_t);
const std::map<std::string, Target> kTargets{{"safetensors_header", fuzz::safetensorsHeader},
                                             {"model_config", fuzz::modelConfig},
                                             {"tokenizer_json", fuzz::tokenizerJson},
                                             {"corpus_readers", fuzz::corpusReaders},
                                             {"check_reference", fuzz::checkReference},
                                             {"toml_config", fuzz::tomlConfig}};

std::vector<fs::path> inputs(const std::string& kind, const std::string& target) {
  std::vector<fs::path> out;
  const auto dir = fs::path(POSGEOM_SOURCE_DIR) / "fuzz" / kind / target;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Returns the InputError's message, or "" when the input was accepted.
std::string run(Target target, const fs::path& input) {
  const auto bytes = readFile(input);
  try {
    target(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(FuzzTargets, EverySeedIsAValidInput) {
  for (const auto& [name, target] : kTargets) {
    const auto seeds = inputs("seeds", name);
    EXPECT_GE(seeds.size(), 3u) << name;
    for (const auto& seed : seeds) EXPECT_EQ(run(target, seed), "") << seed;
  }
}

TEST(FuzzTargets, EveryRegressionInputIsRefusedOrAccepted) {
  size_t checked = 0;
  for (const auto& [name, target] : kTargets)
    for (const auto& input : inputs("regressions", name)) {
      run(target, input);  // a crash or sanitizer report fails the suite
      ++checked;
    }
  RecordProperty("regression_inputs", static_cast<int>(checked));
}

TEST(FuzzTargets, DamagedSeedsAreRefusedWithAMessage) {
  // The first half of each seed: truncated inputs must be refused, not crash.
  for (const auto& [name, target] : kTargets)
    for (const auto& seed : inputs("seeds", name)) {
      auto bytes = readFile(seed);
      if (bytes.size() < 4) continue;
      bytes.resize(bytes.size() / 2);
      try {
        target(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()), "") << seed;
      }
    }
}

}  // namespace
}  // namespace posgeom::testing
