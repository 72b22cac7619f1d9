#include "posgeom/model/load/tensor_resolver.h"

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors_writer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(TensorResolver, CandidatesCoverPrefixesAndLegacyNames) {
  const auto names = model::candidateNames("embeddings.LayerNorm.weight", {"bert."});
  const std::vector<std::string> expected{"embeddings.LayerNorm.weight", "bert.embeddings.LayerNorm.weight",
                                          "embeddings.LayerNorm.gamma", "bert.embeddings.LayerNorm.gamma"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(model::candidateNames("wte.weight", {}).size(), 1u);
}

class ResolverOnGpt2 : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto dir = sharedDir() / "fixtures/models/tiny-gpt2";
    if (!sharedDir().empty() && std::filesystem::exists(dir)) config_ = model::loadModelConfig(dir);
  }
  model::ModelConfig config_;
};

TEST_F(ResolverOnGpt2, FindsEveryRequiredTensorAndSkipsAbsentOptionalOnes) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  const auto checkpoint = io::Checkpoint::open(sharedDir() / "fixtures/models/tiny-gpt2");
  const auto& arch = model::architectureFor("gpt2", "");
  const auto resolved = model::resolveTensors(checkpoint, arch, config_);
  EXPECT_EQ(resolved.size(), 4u + 12u * 3u);  // wte, wpe, ln_f x2 and 12 per block; tied head absent
}

TEST_F(ResolverOnGpt2, IntegerTensorWhereWeightsBelongIsRejected) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto src = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-gpt2/model.safetensors");
  io::SafetensorsWriter w;
  for (const auto& [name, v] : src.tensors()) {
    if (name == "ln_f.bias") {
      std::vector<int64_t> zeros(64, 0);
      w.addI64(name, {64}, zeros);
    } else {
      w.add(name, v.dtype, v.shape, v.data, v.nbytes);
    }
  }
  std::filesystem::create_directories(s / "m");
  w.write(s / "m" / "model.safetensors");
  const auto checkpoint = io::Checkpoint::open(s / "m");
  try {
    model::resolveTensors(checkpoint, model::architectureFor("gpt2", ""), config_);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'ln_f.bias' is I64"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
