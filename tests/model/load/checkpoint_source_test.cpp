#include "posgeom/model/load/checkpoint_source.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>

#include "posgeom/base/error.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// Writes `names` of a safetensors file as a torch.save-format state dict.
void writeStateDict(const io::SafetensorsFile& from, const std::vector<std::string>& names, const fs::path& to) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& n : names) dict.insert(n, model::tensorFromView(from.get(n)).clone());
  const auto bytes = torch::jit::pickle_save(c10::IValue(dict));
  std::ofstream(to, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

at::Tensor lastHidden(const fs::path& dir) {
  const auto loaded = model::loadModel(dir, model::Numerics::parse("float32", "cpu"));
  struct Last : model::LayerObserver {
    at::Tensor h;
    void onHidden(int64_t, const at::Tensor& x) override { h = x.clone(); }
  } last;
  model::ForwardRequest r;
  r.ids = at::arange(12, at::kLong).view({2, 6});
  r.observer = &last;
  loaded.model->forward(r);
  return last.h;
}

class PytorchBin : public ::testing::Test {
 protected:
  void SetUp() override {
    if (sharedDir().empty() || !fs::exists(sharedDir() / "fixtures/models/tiny-gpt2")) return;
    source_ = sharedDir() / "fixtures/models/tiny-gpt2";
  }
  fs::path source_;
};

TEST_F(PytorchBin, SingleFileGivesTheSameModelAsSafetensors) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto st = io::SafetensorsFile::open(source_ / "model.safetensors");
  std::vector<std::string> names;
  for (const auto& [n, v] : st.tensors()) names.push_back(n);
  fs::create_directories(s / "bin");
  writeStateDict(st, names, s / "bin/pytorch_model.bin");
  fs::copy_file(source_ / "config.json", s / "bin/config.json");
  EXPECT_TRUE(at::equal(lastHidden(s / "bin"), lastHidden(source_)));
}

TEST_F(PytorchBin, ShardedThroughItsIndex) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto st = io::SafetensorsFile::open(source_ / "model.safetensors");
  std::vector<std::string> first, second;
  nlohmann::json map;
  for (const auto& [n, v] : st.tensors()) {
    const bool early = n.rfind("h.2.", 0) != 0 && n.rfind("ln_f", 0) != 0;
    (early ? first : second).push_back(n);
    map[n] = early ? "pytorch_model-1.bin" : "pytorch_model-2.bin";
  }
  fs::create_directories(s / "bin");
  writeStateDict(st, first, s / "bin/pytorch_model-1.bin");
  writeStateDict(st, second, s / "bin/pytorch_model-2.bin");
  writeFile(s / "bin/pytorch_model.bin.index.json", nlohmann::json{{"weight_map", map}}.dump());
  fs::copy_file(source_ / "config.json", s / "bin/config.json");
  const auto checkpoint = model::openCheckpoint(s / "bin");
  EXPECT_EQ(checkpoint.files().size(), 2u);
  EXPECT_NE(checkpoint.fileOf("ln_f.weight").find("pytorch_model-2.bin"), std::string::npos);
  EXPECT_TRUE(at::equal(lastHidden(s / "bin"), lastHidden(source_)));
}

TEST(PytorchBinErrors, UnreadableFileSaysHowToConvert) {
  ScratchDir s;
  const char legacy[] = "\x80\x02}q\x00(X\x03\x00\x00\x00old";  // a pre-1.6 pickle, not a zip
  writeFile(s / "pytorch_model.bin", std::string(legacy, sizeof(legacy) - 1));
  try {
    model::openCheckpoint(s.path());
    FAIL();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("pytorch_model.bin: LibTorch cannot read this file"), std::string::npos) << msg;
    EXPECT_NE(msg.find("save_file"), std::string::npos) << msg;
  }
}

TEST(PytorchBinErrors, SafetensorsWinWhenBothExist) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto dir = copyFixtureModel("tiny-gpt2", s.path());
  writeFile(dir / "pytorch_model.bin", "garbage");
  EXPECT_NO_THROW(model::openCheckpoint(dir));
}

}  // namespace
}  // namespace posgeom::testing
