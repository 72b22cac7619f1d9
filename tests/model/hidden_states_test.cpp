#include "posgeom/model/hidden_states.h"

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

model::HiddenStatesRequest tinyGpt2Job(const ScratchDir& s) {
  model::HiddenStatesRequest job;
  job.model_dir = sharedDir() / "fixtures/models/tiny-gpt2";
  job.ids_path = sharedDir() / "fixtures/golden/tiny-gpt2.safetensors";
  job.out_path = s / "out.safetensors";
  return job;
}

TEST(HiddenStates, WritesEveryHiddenStateFinalNormAndLogits) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto job = tinyGpt2Job(s);
  model::writeHiddenStates(job);
  const auto out = io::SafetensorsFile::open(job.out_path);
  for (const char* name : {"hidden.0", "hidden.3", "final_norm"}) {
    ASSERT_NE(out.find(name), nullptr) << name;
    EXPECT_EQ(out.get(name).dtype, io::DType::kF32);
    EXPECT_EQ(out.get(name).shape, (std::vector<int64_t>{2, 24, 64}));
  }
  EXPECT_EQ(out.get("logits").shape, (std::vector<int64_t>{2, 24, 1000}));
  EXPECT_EQ(out.metadata().at("causal"), "true");
}

TEST(HiddenStates, FinalNormFlagReplacesTheLastHiddenState) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  auto job = tinyGpt2Job(s);
  job.final_norm_last = true;
  model::writeHiddenStates(job);
  const auto out = io::SafetensorsFile::open(job.out_path);
  const auto& last = out.get("hidden.3");
  const auto& fn = out.get("final_norm");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(last.data), last.nbytes),
            std::string(reinterpret_cast<const char*>(fn.data), fn.nbytes));
}

TEST(HiddenStates, IdsMustBeIntegers) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  io::SafetensorsWriter w;
  w.addF32("input_ids", {1, 2}, {1.0f, 2.0f});
  w.write(s / "ids.safetensors");
  auto job = tinyGpt2Job(s);
  job.ids_path = s / "ids.safetensors";
  EXPECT_THROW(model::writeHiddenStates(job), InputError);
  EXPECT_FALSE(std::filesystem::exists(job.out_path));
}

}  // namespace
}  // namespace posgeom::testing
