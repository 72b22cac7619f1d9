#include "posgeom/jobs/forward_job.h"

#include <cmath>
#include <cstdlib>

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

const std::string kCommitA(40, 'a'), kCommitB(40, 'b');

// The InputError's message of running `job` ("" when it runs).
std::string refusal(const jobs::ForwardJob& job) {
  try {
    jobs::runForwardJob(job);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

jobs::ForwardJob randomIdsJob(const fs::path& model, int64_t batch, int64_t len, const fs::path& out) {
  jobs::ForwardJob job;
  job.model = model.string();
  job.request.random_batch = batch;
  job.request.random_len = len;
  job.request.out_path = out;
  return job;
}

double maxAbsDiffF32F64(const io::TensorView& a, int64_t a_row, const io::TensorView& b, int64_t b_row) {
  const int64_t n = a.numel() / a.shape[0];
  const auto* x = reinterpret_cast<const float*>(a.data) + a_row * n;
  const auto* y = reinterpret_cast<const double*>(b.data) + b_row * n;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(static_cast<double>(x[i]) - y[i]));
  return worst;
}

// The job resolves a hub name in the local cache, at --revision as analyze does, then
// writes what the model computes.
TEST(ForwardJob, ResolvesAHubNameInTheCacheAtTheRevisionAsked) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  for (const auto& commit : {kCommitA, kCommitB}) {
    const auto snapshot = s / ("hub/models--org--tiny/snapshots/" + commit);
    fs::create_directories(snapshot);
    for (const char* f : {"config.json", "model.safetensors"})
      fs::copy_file(sharedDir() / "fixtures/models/tiny-gpt2" / f, snapshot / f);
  }
  fs::create_directories(s / "hub/models--org--tiny/refs");
  writeFile(s / "hub/models--org--tiny/refs/main", kCommitA);
  setenv("HF_HUB_CACHE", (s / "hub").c_str(), 1);
  jobs::ForwardJob job;
  job.model = "org/tiny";
  job.request.ids_path = sharedDir() / "fixtures/golden/tiny-gpt2.safetensors";
  job.request.out_path = s / "out.safetensors";
  jobs::runForwardJob(job);
  job.revision = kCommitB.substr(0, 8);
  job.request.out_path = s / "out-b.safetensors";
  jobs::runForwardJob(job);
  job.model = "org/missing";
  job.request.out_path = s / "out-missing.safetensors";  // a new file: the refusal is the model's
  const auto message = refusal(job);
  unsetenv("HF_HUB_CACHE");
  const auto out = io::SafetensorsFile::open(s / "out.safetensors");
  EXPECT_EQ(out.get("hidden.0").shape, (std::vector<int64_t>{2, 24, 64}));
  EXPECT_NE(out.metadata().at("model").find("snapshots/" + kCommitA), std::string::npos);
  const auto out_b = io::SafetensorsFile::open(s / "out-b.safetensors");
  EXPECT_NE(out_b.metadata().at("model").find("snapshots/" + kCommitB), std::string::npos);
  EXPECT_EQ(message.rfind("org/missing: ", 0), 0u) << message;
  EXPECT_NE(message.find("cache"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(s / "out-missing.safetensors"));
}

// Probe 3 case 285: --out <model>/model.safetensors replaced the weights it was reading.
TEST(ForwardJob, NeverWritesOverTheModelsOwnFilesEvenWithForce) {
  ScratchDir s;
  const auto model = editedHfFixture(s.path(), "hf-llama", [](nlohmann::json&) {});
  const auto weights = readFile(model / "model.safetensors");
  auto job = randomIdsJob(model, 2, 16, model / "model.safetensors");
  job.force = true;
  EXPECT_EQ(refusal(job), (model / "model.safetensors").string() +
                              ": is one of the files this run reads; choose another --out (--force never replaces an input)");
  job.request.out_path = model / "config.json";
  EXPECT_NE(refusal(job), "");
  EXPECT_EQ(readFile(model / "model.safetensors"), weights);
}

// Probe 3 section 10: forward replaced any existing file.
TEST(ForwardJob, ReplacesAnExistingOutOnlyWithForce) {
  ScratchDir s;
  const auto model = editedHfFixture(s.path(), "hf-llama", [](nlohmann::json&) {});
  writeFile(s / "o.safetensors", "precious");
  auto job = randomIdsJob(model, 2, 16, s / "o.safetensors");
  EXPECT_EQ(refusal(job), (s / "o.safetensors").string() + ": exists; pass --force to replace it");
  EXPECT_EQ(readFile(s / "o.safetensors"), "precious");
  job.force = true;
  jobs::runForwardJob(job);
  EXPECT_EQ(io::SafetensorsFile::open(s / "o.safetensors").get("hidden.2").shape, (std::vector<int64_t>{2, 16, 48}));
}

// Probe 3 cases 13, 15, 34, 71: forward wrote NaN hidden states with exit 0. Weights that
// are finite but overflow the first block's MLP make hidden.1 Inf or NaN, and hidden.0 is finite.
TEST(ForwardJob, ANonFiniteHiddenStateIsRefusedNamingItAndNothingIsWritten) {
  ScratchDir s;
  const auto model = editedHfFixture(s.path(), "hf-llama", [](nlohmann::json&) {});
  fillF32Tensor(model / "model.safetensors", "model.layers.0.mlp.down_proj.weight", 3e38f);
  const auto job = randomIdsJob(model, 2, 16, s / "out/h.safetensors");
  EXPECT_EQ(refusal(job), model.string() +
                              ": hidden.1 (the first non-finite output) holds NaN or Inf: this model's config or weights "
                              "make its forward non-finite; nothing written");
  EXPECT_FALSE(fs::exists(s / "out"));
}

// Probe 3 case 281: --random-ids 0,16 became one sequence.
TEST(ForwardJob, RandomIdsMustHavePositiveSizes) {
  ScratchDir s;
  const auto model = hfFixtureDir("hf-gpt2");
  EXPECT_EQ(refusal(randomIdsJob(model, 0, 16, s / "h.safetensors")),
            "--random-ids: 0,16: B (sequences) and T (tokens each) must both be positive");
  EXPECT_NE(refusal(randomIdsJob(model, 2, -1, s / "h.safetensors")), "");
  EXPECT_FALSE(fs::exists(s / "h.safetensors"));
}

// Probe 3 case 280: 100000,100000 allocated 80 GB of ids before T met the model's positions.
TEST(ForwardJob, RandomIdsAreCheckedAgainstThePositionsAndTheMemoryBeforeAnyIsMade) {
  ScratchDir s;
  EXPECT_EQ(refusal(randomIdsJob(hfFixtureDir("hf-gpt2"), 100000, 100000, s / "h.safetensors")),
            "--random-ids: T = 100000 exceeds the model's 64 positions");
  // RoPE has no position limit: the outputs' size is what stops it.
  const auto message = refusal(randomIdsJob(hfFixtureDir("hf-llama"), 1000000000, 1000000000, s / "h.safetensors"));
  EXPECT_EQ(message.rfind("--random-ids: 1000000000 x 1000000000 ids give ", 0), 0u) << message;
  EXPECT_NE(message.find("or leave the logits out with --no-logits"), std::string::npos) << message;
}

// Probe 3 case 271: the logits are most of the file, and could not be left out.
TEST(ForwardJob, NoLogitsLeavesThemOut) {
  ScratchDir s;
  auto job = randomIdsJob(hfFixtureDir("hf-gpt2"), 2, 16, s / "h.safetensors");
  job.request.logits = false;
  jobs::runForwardJob(job);
  const auto out = io::SafetensorsFile::open(s / "h.safetensors");
  EXPECT_EQ(out.find("logits"), nullptr);
  EXPECT_NE(out.find("hidden.2"), nullptr);
  EXPECT_NE(out.find("final_norm"), nullptr);
}

// Many sequences run a few at a time (2048 tokens on the CPU: 85 of 24): every row still
// matches transformers' float64 golden for its ids.
TEST(ForwardJob, SequencesRunInPartsMatchTheGoldenRowByRow) {
  ScratchDir s;
  const auto golden = io::SafetensorsFile::open(hfFixtureDir("hf-gpt2") / "golden.safetensors");
  const auto& golden_ids = golden.get("input_ids");
  const auto* g = reinterpret_cast<const int64_t*>(golden_ids.data);
  const int64_t rows = 100, len = golden_ids.shape[1];
  std::vector<int64_t> ids;
  for (int64_t r = 0; r < rows; ++r) ids.insert(ids.end(), g + (r % 2) * len, g + (r % 2 + 1) * len);
  io::SafetensorsWriter w;
  w.addI64("input_ids", {rows, len}, ids);
  w.write(s / "ids.safetensors");
  jobs::ForwardJob job;
  job.model = hfFixtureDir("hf-gpt2").string();
  job.request.ids_path = s / "ids.safetensors";
  job.request.out_path = s / "h.safetensors";
  jobs::runForwardJob(job);
  const auto out = io::SafetensorsFile::open(s / "h.safetensors");
  for (const char* name : {"hidden.0", "hidden.2", "final_norm", "logits"})
    for (int64_t r : {int64_t{0}, int64_t{1}, int64_t{84}, int64_t{85}, int64_t{99}})
      EXPECT_LT(maxAbsDiffF32F64(out.get(name), r, golden.get(name), r % 2), 1e-4) << name << " row " << r;
}

}  // namespace
}  // namespace posgeom::testing
