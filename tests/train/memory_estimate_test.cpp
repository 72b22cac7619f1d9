#include "posgeom/train/memory_estimate.h"

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/train/trainer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

std::string refusal(const train::TrainConfig& c) {
  try {
    train::requireTrainingMemory(c, 256, runtime::DeviceSpec{});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

train::TrainConfig fromFile(const fs::path& path) {
  train::TrainConfig c;
  c.source = path;
  c.model = {4, 4, 128, 128, 128, 0.0, true, "learned"};
  c.optim.batch_size = 16;
  return c;
}

// The parameters counted from the sizes are those the trainer really trains (its
// training.json counts its tensors).
TEST(TrainingMemory, CountsTheParametersTheTrainerTrains) {
  ScratchDir s;
  std::string text;
  for (int i = 0; i < 100; ++i) text += "pack my box with five dozen liquor jugs\n";
  writeFile(s / "c.txt", text);
  train::TrainConfig c;
  c.model = {2, 2, 32, 16, 24, 0.0, true, "learned"};
  c.data.corpus = s / "c.txt";
  c.data.tokens = "bytes";
  c.optim.iterations = 1;
  c.optim.batch_size = 2;
  c.run.eval_batches = 1;
  c.run.out = s / "m";
  train::runTraining(c, {});
  const auto parameters = io::readJsonFile(s / "m/training.json")["parameters"].get<int64_t>();
  EXPECT_EQ(static_cast<int64_t>(train::estimateTrainingMemory(c, 256).parameters), parameters);
  c.model.position_encoding = "alibi";  // no position table
  EXPECT_EQ(static_cast<int64_t>(train::estimateTrainingMemory(c, 256).parameters), parameters - 24 * 32);
}

// A context of 10^8 was OOM-killed after 23.5 GB; layers 10^5 or width 10^6 died in the
// allocator (exit 3). Refused now, naming the file and the keys, with no int64 overflow
// (width^2 x layers is 10^17 parameters).
TEST(TrainingMemory, TooLargeIsRefusedNamingTheFileAndTheKeys) {
  const fs::path file = "big.toml";
  auto c = fromFile(file);
  EXPECT_EQ(refusal(c), "no error");  // the bundled default model's sizes
  c.model.context = c.model.positions = 100000000;
  auto message = refusal(c);
  EXPECT_EQ(message.rfind("big.toml: training needs about ", 0), 0u) << message;
  EXPECT_NE(message.find("lower [optim] batch_size 16 and [model] context 100000000"), std::string::npos) << message;
  c = fromFile(file);
  c.model.width = 1000000;
  c.model.layers = 100000;
  message = refusal(c);
  EXPECT_NE(message.find("lower [model] layers 100000 and width 1000000"), std::string::npos) << message;
  const auto estimate = train::estimateTrainingMemory(c, 256);
  EXPECT_GT(estimate.parameters, 1.2e17L);  // 12 d^2 per layer
  c = fromFile(file);
  c.optim.batch_size = 100000000;
  message = refusal(c);
  EXPECT_NE(message.find("lower [optim] batch_size 100000000"), std::string::npos) << message;
  c.source.clear();
  EXPECT_EQ(refusal(c).rfind("train: ", 0), 0u);
}

}  // namespace
}  // namespace posgeom::testing
