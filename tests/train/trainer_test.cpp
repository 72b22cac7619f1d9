#include "posgeom/train/trainer.h"

#include <algorithm>

#include "posgeom/base/error.h"

#include "posgeom/io/json_file.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/train/training_data.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

train::TrainConfig tinyConfig(const ScratchDir& s, const std::string& out) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the quick brown fox jumps over the lazy dog " + std::to_string(i % 7) + "\n";
  writeFile(s / "corpus.txt", text);
  train::TrainConfig c;
  c.model = {2, 2, 32, 32, 32, 0.1, true, "learned"};
  c.data.corpus = s / "corpus.txt";
  c.optim.iterations = 24;
  c.optim.batch_size = 8;
  c.optim.learning_rate = 3e-3;
  c.optim.min_learning_rate = 3e-4;
  c.optim.warmup = 4;
  c.run.eval_interval = 8;
  c.run.eval_batches = 2;
  c.run.checkpoint_interval = 8;
  c.run.out = s / out;
  return c;
}

// Acceptance: the same seed and thread count give the same loss curve bit for bit, and an
// interrupted run resumed from its checkpoint continues the same curve to the same model.
TEST(Trainer, DeterministicAndResumable) {
  ScratchDir s;
  train::runTraining(tinyConfig(s, "a"), {});
  train::runTraining(tinyConfig(s, "b"), {});
  const auto log = readFile(s / "a/train_log.csv");
  EXPECT_EQ(readFile(s / "b/train_log.csv"), log);
  train::TrainOptions stop;
  stop.stop_after = 11;  // between checkpoints and evaluations
  train::runTraining(tinyConfig(s, "c"), stop);
  EXPECT_TRUE(fs::exists(s / "c/checkpoint.safetensors"));
  train::TrainOptions resume;
  resume.resume = true;
  train::runTraining(tinyConfig(s, "c"), resume);
  EXPECT_EQ(readFile(s / "c/train_log.csv"), log);
  EXPECT_EQ(readFile(s / "c/model.safetensors"), readFile(s / "a/model.safetensors"));
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 25);  // header + 24 steps
}

// --save-every keeps the model at steps N, 2N, ...: each step_<k>/ is the model a run
// stopped at step k writes, a series a resumed run continues without changing any step.
TEST(Trainer, SaveEveryKeepsTheModelOfEveryStepInASeries) {
  ScratchDir s;
  auto series = tinyConfig(s, "series");
  series.run.save_every = 6;
  train::runTraining(series, {});
  for (int step : {6, 12, 18, 24}) {
    const auto dir = s / "series" / ("step_" + std::to_string(step));
    ASSERT_TRUE(fs::exists(dir / "model.safetensors")) << dir;
    EXPECT_EQ(io::readJsonFile(dir / "training.json").at("steps").get<int64_t>(), step);
    EXPECT_TRUE(fs::exists(dir / "config.json") && fs::exists(dir / "tokenizer.json") && fs::exists(dir / "train_config.json"));
  }
  EXPECT_FALSE(fs::exists(s / "series/step_3"));
  EXPECT_EQ(readFile(s / "series/step_24/model.safetensors"), readFile(s / "series/model.safetensors"));
  train::TrainOptions stop;
  stop.stop_after = 12;
  train::runTraining(tinyConfig(s, "stopped"), stop);
  EXPECT_EQ(readFile(s / "stopped/model.safetensors"), readFile(s / "series/step_12/model.safetensors"));
  // The series started on resume (save_every is not part of what a resume must match).
  auto resumed = tinyConfig(s, "stopped");
  resumed.run.save_every = 6;
  train::TrainOptions resume;
  resume.resume = true;
  train::runTraining(resumed, resume);
  EXPECT_FALSE(fs::exists(s / "stopped/step_12"));
  EXPECT_EQ(readFile(s / "stopped/step_18/model.safetensors"), readFile(s / "series/step_18/model.safetensors"));
  EXPECT_EQ(readFile(s / "stopped/model.safetensors"), readFile(s / "series/model.safetensors"));
  const auto loaded = model::loadModel(s / "series/step_6", model::Numerics::parse("float32", "cpu"));
  EXPECT_EQ(loaded.model->config().num_layers, 2);
}

TEST(Trainer, LearnsAndWritesALoadableModel) {
  ScratchDir s;
  auto c = tinyConfig(s, "m");
  c.model.position_encoding = "alibi";
  const auto log = train::runTraining(c, {});
  const auto info = io::readJsonFile(s / "m/training.json");
  EXPECT_LT(info["final_validation_loss"].get<double>(), info["data"]["unigram_validation_loss"].get<double>());
  EXPECT_LT(log.back().train_loss, log.front().train_loss);
  const auto loaded = model::loadModel(s / "m", model::Numerics::parse("float32", "cpu"));
  EXPECT_EQ(loaded.model->config().positions, model::PositionScheme::kAlibi);
  EXPECT_TRUE(loaded.model->alibiSlopes().defined());
  EXPECT_EQ(io::readJsonFile(s / "m/config.json")["posgeom_position_encoding"], "alibi");
  EXPECT_TRUE(fs::exists(s / "m/tokenizer.json"));
  EXPECT_EQ(io::readJsonFile(s / "m/train_config.json")["model"]["position_encoding"], "alibi");
}

// answer_loss: the training loss is the mean cross-entropy over the answers' tokens only,
// computed here from the definition with the model the step saw (learning rate 0 keeps it).
TEST(Trainer, AnswerLossIsTheMeanOverTheAnswersTokens) {
  ScratchDir s;
  auto c = tinyConfig(s, "a");
  c.data.task = "addition";
  c.data.digits = 3;
  c.data.answer_loss = true;
  c.model.dropout = 0;
  c.optim.iterations = 1;
  c.optim.learning_rate = c.optim.min_learning_rate = 0;
  c.optim.weight_decay = 0;
  const auto log = train::runTraining(c, {});
  const auto data = train::openTrainingData(c.data);
  const auto ids = data->batch(false, c.optim.batch_size, c.model.context + 1, c.run.seed, 0);
  const auto weights = data->lossWeights(ids, c.optim.batch_size, c.model.context + 1);
  const auto loaded = model::loadModel(s / "a", model::Numerics::parse("float32", "cpu"));
  const auto all = at::tensor(ids, at::TensorOptions().dtype(at::kLong)).view({c.optim.batch_size, c.model.context + 1});
  model::ForwardRequest r;
  r.ids = all.narrow(1, 0, c.model.context);
  r.want_logits = true;
  const auto logp = at::log_softmax(loaded.model->forward(r).logits.to(at::kDouble), -1);
  double sum = 0, count = 0;
  for (int64_t b = 0; b < c.optim.batch_size; ++b)
    for (int64_t i = 0; i < c.model.context; ++i) {
      const double w = weights[static_cast<std::size_t>(b * c.model.context + i)];
      sum -= w * logp[b][i][all[b][i + 1].item<int64_t>()].item<double>();
      count += w;
    }
  ASSERT_GT(count, 0);
  EXPECT_NEAR(log.front().train_loss, sum / count, 1e-5);
  c.data.answer_loss = false;  // every token: another number
  c.run.out = s / "b";
  EXPECT_GT(std::abs(train::runTraining(c, {}).front().train_loss - sum / count), 1e-3);
}

TEST(Trainer, NoPositionEncodingMeansNoPositionTable) {
  ScratchDir s;
  auto c = tinyConfig(s, "n");
  c.model.position_encoding = "none";
  c.optim.iterations = 2;
  train::runTraining(c, {});
  const auto loaded = model::loadModel(s / "n", model::Numerics::parse("float32", "cpu"));
  EXPECT_EQ(loaded.model->config().positions, model::PositionScheme::kNone);
  EXPECT_EQ(io::SafetensorsFile::open(s / "n/model.safetensors").find("wpe.weight"), nullptr);
  auto config = io::readJsonFile(s / "n/config.json");
  config["posgeom_position_encoding"] = "sinusoidal";
  writeFile(s / "n/config.json", config.dump());
  EXPECT_THROW(model::loadModel(s / "n", model::Numerics::parse("float32", "cpu")), InputError);
}

TEST(Trainer, ResumeNeedsTheSameConfig) {
  ScratchDir s;
  train::TrainOptions stop;
  stop.stop_after = 3;
  train::runTraining(tinyConfig(s, "r"), stop);
  auto other = tinyConfig(s, "r");
  other.optim.learning_rate = 1e-2;
  train::TrainOptions resume;
  resume.resume = true;
  EXPECT_THROW(train::runTraining(other, resume), InputError);
}

}  // namespace
}  // namespace posgeom::testing
