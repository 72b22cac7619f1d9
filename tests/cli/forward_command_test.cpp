#include <cstdlib>

#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

float maxAbsDiff(const io::TensorView& a, const io::TensorView& b) {
  const auto* x = reinterpret_cast<const float*>(a.data);
  const auto* y = reinterpret_cast<const float*>(b.data);
  float worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

TEST(ForwardCommand, CausalFlagReproducesTheCausalBertGolden) {
  POSGEOM_REQUIRE_SHARED("fixtures/golden/tiny-bert-causal.safetensors");
  ScratchDir s;
  const auto golden_path = sharedDir() / "fixtures/golden/tiny-bert-causal.safetensors";
  const auto r = runPosgeom({"forward", "--model", (sharedDir() / "fixtures/models/tiny-bert").string(), "--ids",
                             golden_path.string(), "--out", (s / "o.safetensors").string(), "--causal"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = io::SafetensorsFile::open(s / "o.safetensors");
  const auto golden = io::SafetensorsFile::open(golden_path);
  for (const char* name : {"hidden.0", "hidden.1", "hidden.2", "hidden.3"})
    EXPECT_LT(maxAbsDiff(out.get(name), golden.get(name)), 1e-4) << name;
  EXPECT_EQ(out.find("logits"), nullptr);  // tiny-bert ships no MLM head
}

TEST(ForwardCommand, UnknownDtypeIsAUsageError) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto r = runPosgeom({"forward", "--model", (sharedDir() / "fixtures/models/tiny-gpt2").string(), "--ids",
                             (sharedDir() / "fixtures/golden/tiny-gpt2.safetensors").string(), "--out",
                             (s / "o.safetensors").string(), "--dtype", "int4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--dtype: 'int4'"), std::string::npos) << r.err;
}


// Probe 3 case 285: `--out <model>/model.safetensors` replaced the checkpoint, exit 0.
TEST(ForwardCommand, OutOverTheModelsOwnWeightsIsRefusedEvenWithForce) {
  ScratchDir s;
  const auto victim = editedHfFixture(s.path(), "hf-llama", [](nlohmann::json&) {});
  const auto r = runPosgeom({"-q", "forward", "--model", victim.string(), "--random-ids", "2,16", "--out",
                             (victim / "model.safetensors").string(), "--force"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "posgeom: error: " + (victim / "model.safetensors").string() +
                       ": is one of the files this run reads; choose another --out (--force never replaces an input)\n");
  EXPECT_EQ(runPosgeom({"inspect", "--model", victim.string()}).exit_code, 0);
}

// Probe 3 section 10: any existing file was replaced.
TEST(ForwardCommand, AnExistingOutIsReplacedOnlyWithForce) {
  ScratchDir s;
  writeFile(s / "h.safetensors", "precious");
  const std::vector<std::string> args = {"forward", "--model", hfFixtureDir("hf-gpt2").string(), "--random-ids", "2,8",
                                         "--out", (s / "h.safetensors").string()};
  const auto r = runPosgeom(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("h.safetensors: exists; pass --force to replace it"), std::string::npos) << r.err;
  EXPECT_EQ(readFile(s / "h.safetensors"), "precious");
  auto forced = args;
  forced.push_back("--force");
  ASSERT_EQ(runPosgeom(forced).exit_code, 0);
  EXPECT_NE(io::SafetensorsFile::open(s / "h.safetensors").find("logits"), nullptr);
}

// Probe 3 case 284: `--out DIR/` said "cannot write: Success".
TEST(ForwardCommand, OutNamingADirectorySaysSo) {
  ScratchDir s;
  const auto run = [&](const std::string& out) {
    return runPosgeom({"forward", "--model", hfFixtureDir("hf-gpt2").string(), "--random-ids", "2,8", "--out", out});
  };
  fs::create_directories(s / "d");
  auto r = run((s / "d").string() + "/");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("d/: names a directory, but --out is a file; give the file's name"), std::string::npos) << r.err;
  r = run((s / "d").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("d: is a directory, but --out is a file"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(s / "d"));
}

// Probe 3 case 281: `--random-ids 0,16` silently became one sequence.
TEST(ForwardCommand, IdsOutsideTheVocabularyNameTheirFile) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto ids = s / "bad-ids.safetensors";
  io::SafetensorsWriter w;
  w.addI64("input_ids", {1, 3}, {1, 2, 99999});
  w.write(ids);
  const auto r = runPosgeom({"forward", "--model", (sharedDir() / "fixtures/models/tiny-gpt2").string(), "--ids", ids.string(),
                             "--out", (s / "h.safetensors").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(ids.string() + ": input_ids: token id 99999 is outside the vocabulary"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(s / "h.safetensors"));
}

TEST(ForwardCommand, RandomIdsOfNoSequencesAreRefused) {
  ScratchDir s;
  const auto r = runPosgeom({"forward", "--model", hfFixtureDir("hf-gpt2").string(), "--random-ids", "0,16", "--out",
                             (s / "h.safetensors").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "posgeom: error: --random-ids: 0,16: B (sequences) and T (tokens each) must both be positive\n");
  EXPECT_FALSE(fs::exists(s / "h.safetensors"));
}

// Probe 3 case 271: the logits, most of the file, could not be left out.
TEST(ForwardCommand, NoLogitsLeavesThemOut) {
  ScratchDir s;
  const auto r = runPosgeom({"forward", "--model", hfFixtureDir("hf-gpt2").string(), "--random-ids", "2,8", "--out",
                             (s / "h.safetensors").string(), "--no-logits"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = io::SafetensorsFile::open(s / "h.safetensors");
  EXPECT_EQ(out.find("logits"), nullptr);
  EXPECT_NE(out.find("hidden.2"), nullptr);
}

// Probe 3 case 124: only analyze had --revision.
TEST(ForwardCommand, RevisionPicksTheHubSnapshot) {
  ScratchDir s;
  const std::string main_commit(40, 'a'), other(40, 'b');
  fs::create_directories(s / "hub/models--org--m/snapshots");
  for (const auto& [commit, fixture] : {std::pair{main_commit, "hf-gpt2"}, std::pair{other, "hf-llama"}})
    fs::copy(hfFixtureDir(fixture), s / ("hub/models--org--m/snapshots/" + commit), fs::copy_options::recursive);
  fs::create_directories(s / "hub/models--org--m/refs");
  writeFile(s / "hub/models--org--m/refs/main", main_commit);
  setenv("HF_HUB_CACHE", (s / "hub").c_str(), 1);
  const auto r = runPosgeom({"forward", "--model", "org/m", "--revision", other.substr(0, 7), "--random-ids", "2,8", "--out",
                             (s / "h.safetensors").string()});
  unsetenv("HF_HUB_CACHE");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(io::SafetensorsFile::open(s / "h.safetensors").metadata().at("model").find(other), std::string::npos);
}

}  // namespace
}  // namespace posgeom::testing
