// The CLI's contract with its users: exit codes and one clear line per bad input.
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

TEST(Cli, HelpSucceeds) {
  const auto r = runPosgeom({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("forward"), std::string::npos);
}

TEST(Cli, UnknownOptionAndMissingSubcommandAreUsageErrors) {
  EXPECT_EQ(runPosgeom({"--no-such-flag"}).exit_code, 2);
  EXPECT_EQ(runPosgeom({}).exit_code, 2);
  EXPECT_EQ(runPosgeom({"forward", "--model", "x"}).exit_code, 2);  // --ids and --out missing
}

struct BadCheckpoint {
  const char* name;
  std::function<void(const fs::path& dir)> damage;
  const char* file;   // the file the message must name
  const char* fault;  // and what it must say
};

void PrintTo(const BadCheckpoint& c, std::ostream* os) { *os << c.name; }

class CliBadCheckpoint : public ::testing::TestWithParam<BadCheckpoint> {};

TEST_P(CliBadCheckpoint, ExitsTwoWithOneLineNamingFileAndFault) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto dir = copyFixtureModel("tiny-gpt2", s.path());
  GetParam().damage(dir);
  const auto out = s / "out.safetensors";
  const auto r = runPosgeom({"forward", "--model", dir.string(), "--ids",
                             (sharedDir() / "fixtures/golden/tiny-gpt2.safetensors").string(), "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  const std::string named = *GetParam().file ? (dir / GetParam().file).string() : dir.string() + ":";
  EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(GetParam().fault), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

const fs::path kWeights = "model.safetensors";

INSTANTIATE_TEST_SUITE_P(
    Cases, CliBadCheckpoint,
    ::testing::Values(
        BadCheckpoint{"Truncated",
                      [](const fs::path& d) { fs::resize_file(d / kWeights, fs::file_size(d / kWeights) / 2); },
                      "model.safetensors", "bytes of data"},
        BadCheckpoint{"TruncatedToNothing", [](const fs::path& d) { fs::resize_file(d / kWeights, 5); },
                      "model.safetensors", "truncated"},
        BadCheckpoint{"HeaderLengthPastEnd",
                      [](const fs::path& d) {
                        auto b = readFile(d / kWeights);
                        b[5] = '\x7f';
                        writeFile(d / kWeights, b);
                      },
                      "model.safetensors", "runs past the end"},
        BadCheckpoint{"BadJson",
                      [](const fs::path& d) {
                        auto b = readFile(d / kWeights);
                        b[8] = '#';
                        writeFile(d / kWeights, b);
                      },
                      "model.safetensors", "not valid JSON"},
        BadCheckpoint{"OverlappingOffsets",
                      [](const fs::path& d) {
                        rewriteSafetensorsHeader(d / kWeights, [](nlohmann::json& h) {
                          h["ln_f.bias"]["data_offsets"] = h["ln_f.weight"]["data_offsets"];
                        });
                      },
                      "model.safetensors", "overlap"},
        BadCheckpoint{"OffsetsOutOfRange",
                      [](const fs::path& d) {
                        rewriteSafetensorsHeader(d / kWeights, [](nlohmann::json& h) {
                          h["ln_f.bias"]["data_offsets"] = {1u << 30, (1u << 30) + 256};
                        });
                      },
                      "model.safetensors", "past the"},
        BadCheckpoint{"DtypeShapeMismatch",
                      [](const fs::path& d) {
                        rewriteSafetensorsHeader(d / kWeights, [](nlohmann::json& h) { h["ln_f.bias"]["dtype"] = "F16"; });
                      },
                      "model.safetensors", "need 128"},
        BadCheckpoint{"MissingTensor",
                      [](const fs::path& d) { rewriteSafetensorsHeader(d / kWeights, [](nlohmann::json& h) { h.erase("h.1.ln_2.weight"); }); },
                      "", "missing tensor 'h.1.ln_2.weight'"},
        BadCheckpoint{"WrongShapeForConfig",
                      [](const fs::path& d) {
                        auto c = readFile(d / "config.json");
                        c.replace(c.find("\"n_embd\": 64"), 12, "\"n_embd\": 32");
                        writeFile(d / "config.json", c);
                      },
                      "model.safetensors", "tensor 'wte.weight' has shape [1000, 64]"},
        BadCheckpoint{"MissingConfigKey",
                      [](const fs::path& d) {
                        auto c = nlohmann::json::parse(readFile(d / "config.json"));
                        c.erase("n_layer");
                        writeFile(d / "config.json", c.dump());
                      },
                      "config.json", "missing key 'n_layer'"},
        BadCheckpoint{"UnsupportedModelType",
                      [](const fs::path& d) {
                        auto c = nlohmann::json::parse(readFile(d / "config.json"));
                        c["model_type"] = "xlnet";
                        writeFile(d / "config.json", c.dump());
                      },
                      "config.json", "supported: bert, bloom, cohere, cohere2, deberta-v2, deepseek_v2, deepseek_v3, falcon, gemma, gemma2, gemma3, gemma3_text, gpt2, gpt_neo, gpt_neox, gpt_oss, gptj, granite, llama, mistral, mixtral, modernbert, mpt, mt5, olmo, olmo2, olmo3, olmoe, opt, phi, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe, roberta, smollm3, stablelm, starcoder2, t5"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(Cli, BadIdsFileIsABadInput) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  writeFile(s / "ids.safetensors", "nonsense");
  const auto r = runPosgeom({"forward", "--model", (sharedDir() / "fixtures/models/tiny-gpt2").string(), "--ids",
                             (s / "ids.safetensors").string(), "--out", (s / "o.safetensors").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ids.safetensors: header length"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace posgeom::testing

namespace posgeom::testing {
namespace {

TEST(Main, QuietAndLogLevelSilenceInfoEverywhere) {
  ScratchDir s;
  const auto quiet = runPosgeom({"baseline", "sinusoidal", "--dim", "8", "--seq-len", "16", "--screenot-k", "3", "--quiet", "--out", (s / "a").string()});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  const auto loud = runPosgeom({"baseline", "sinusoidal", "--dim", "8", "--seq-len", "16", "--screenot-k", "3", "--out", (s / "b").string()});
  EXPECT_NE(loud.err.find("posgeom: info: "), std::string::npos);
  const auto level = runPosgeom({"--log-level", "error", "random-model", "--out", (s / "m").string()});
  ASSERT_EQ(level.exit_code, 0) << level.err;
  EXPECT_EQ(level.err, "");
}

// Idle OpenMP and OpenBLAS threads must sleep, not spin against each other: set for the
// commands that run a model, before those libraries read them, unless the user set them.
TEST(Cli, ModelCommandsRunWithSleepingIdleThreads) {
  ScratchDir s;
  const auto dir = s / "m";
  ASSERT_EQ(runPosgeom({"random-model", "--out", dir.string()}).exit_code, 0);
  auto forward = [&](std::vector<std::string> env) {
    std::vector<std::string> args = {"-u", "OMP_WAIT_POLICY", "-u", "OPENBLAS_THREAD_TIMEOUT"};
    args.insert(args.end(), env.begin(), env.end());
    for (const std::string a : {POSGEOM_BINARY, "--log-level", "debug", "forward", "--model"}) args.push_back(a);
    args.push_back(dir.string());
    for (const std::string a : {"--random-ids", "1,4", "--force", "--out"}) args.push_back(a);  // each run over the last's file
    args.push_back((s / "o.safetensors").string());
    return runProgram("/usr/bin/env", args);
  };
  const auto defaults = forward({});
  ASSERT_EQ(defaults.exit_code, 0) << defaults.err;
  EXPECT_NE(defaults.err.find("OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4"), std::string::npos) << defaults.err;
  const auto chosen = forward({"OMP_WAIT_POLICY=active"});
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_NE(chosen.err.find("OMP_WAIT_POLICY=active OPENBLAS_THREAD_TIMEOUT=4"), std::string::npos) << chosen.err;
}

}  // namespace
}  // namespace posgeom::testing
