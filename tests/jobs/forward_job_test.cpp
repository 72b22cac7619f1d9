#include "posgeom/jobs/forward_job.h"

#include <cstdlib>

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// The job resolves a hub name in the local cache, then writes what the model computes.
TEST(ForwardJob, ResolvesAHubNameInTheCache) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto snapshot = s / "hub/models--org--tiny/snapshots/abc";
  fs::create_directories(snapshot);
  for (const char* f : {"config.json", "model.safetensors"})
    fs::copy_file(sharedDir() / "fixtures/models/tiny-gpt2" / f, snapshot / f);
  fs::create_directories(s / "hub/models--org--tiny/refs");
  writeFile(s / "hub/models--org--tiny/refs/main", "abc");
  setenv("HF_HUB_CACHE", (s / "hub").c_str(), 1);
  jobs::ForwardJob job;
  job.model = "org/tiny";
  job.request.ids_path = sharedDir() / "fixtures/golden/tiny-gpt2.safetensors";
  job.request.out_path = s / "out.safetensors";
  jobs::runForwardJob(job);
  unsetenv("HF_HUB_CACHE");
  const auto out = io::SafetensorsFile::open(job.request.out_path);
  EXPECT_EQ(out.get("hidden.0").shape, (std::vector<int64_t>{2, 24, 64}));
  EXPECT_NE(out.metadata().at("model").find("snapshots/abc"), std::string::npos);
  job.model = "org/missing";
  EXPECT_THROW(jobs::runForwardJob(job), InputError);
}

}  // namespace
}  // namespace posgeom::testing
