#include "posgeom/train/trainer.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <functional>

#include "posgeom/base/error.h"

#include "posgeom/io/json_file.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/runtime/cpu_features.h"
#include "posgeom/runtime/device.h"
#include "posgeom/train/training_data.h"
#include "test_devices.h"
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

// On each test device: the steps run and the loss falls. On CUDA the trainer's ids are on
// the GPU before the forward pass (the first step once failed there pinning them: only
// host memory can be page-locked), and the gradient norm is one synchronisation a step.
class TrainerOnDevice : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Devices, TrainerOnDevice, ::testing::ValuesIn(testDevices()), deviceCaseName);

TEST_P(TrainerOnDevice, StepsRunAndTheLossFalls) {
  ScratchDir s;
  auto config = tinyConfig(s, "run");
  config.optim.iterations = 16;
  train::TrainOptions options;
  options.device = runtime::parseDevice(GetParam());
  ASSERT_NO_THROW(runtime::requireDevice(options.device, "test device " + GetParam()));
  const auto log = train::runTraining(config, options);
  ASSERT_EQ(log.size(), 16u);
  EXPECT_LT(log.back().train_loss, log.front().train_loss);
  EXPECT_TRUE(fs::exists(s / "run/model.safetensors"));
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
  // The machine it ran on (issue 39): threads and the CPU's model and vector features.
  EXPECT_GE(info["threads"].get<int64_t>(), 1);
  EXPECT_EQ(info["cpu"]["model"], runtime::thisCpu().model);
  EXPECT_EQ(info["cpu"]["features"].get<std::vector<std::string>>(), runtime::thisCpu().features);
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

std::string refusal(const train::TrainConfig& c, const train::TrainOptions& o) {
  try {
    train::runTraining(c, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

train::TrainOptions resuming() {
  train::TrainOptions o;
  o.resume = true;
  return o;
}

// The refusal names the key that changed, as analyze's does.
TEST(Trainer, ResumeNeedsTheSameConfig) {
  ScratchDir s;
  train::TrainOptions stop;
  stop.stop_after = 3;
  train::runTraining(tinyConfig(s, "r"), stop);
  auto other = tinyConfig(s, "r");
  other.optim.learning_rate = 1e-2;
  EXPECT_EQ(refusal(other, resuming()), (s / "r/checkpoint.safetensors").string() +
                                            ": was made with another training config: optim.learning_rate (saved 0.003, now 0.01)");
  other = tinyConfig(s, "r");
  other.model.width = 64;
  EXPECT_NE(refusal(other, resuming()).find("model.width (saved 32, now 64)"), std::string::npos);
  // Another spelling of the same --out is the same run.
  other = tinyConfig(s, "r");
  other.run.out = s.path() / "." / "r";
  EXPECT_EQ(refusal(other, resuming()), "no error");
}

// Used to continue silently on other data, past the end of the schedule ("resuming at step
// 30 of 10", the step-30 model written as the finished run) or with other threads.
TEST(Trainer, ResumeRefusesAnotherCorpusAFinishedScheduleAndOtherThreads) {
  ScratchDir s;
  train::TrainOptions stop;
  stop.stop_after = 10;
  train::runTraining(tinyConfig(s, "r"), stop);
  const auto checkpoint = readFile(s / "r/checkpoint.safetensors");
  auto shorter = tinyConfig(s, "r");
  shorter.optim.iterations = 6;
  EXPECT_EQ(refusal(shorter, resuming()), (s / "r/checkpoint.safetensors").string() +
                                              ": is at step 10, past the 6 iterations asked: resume with --iterations 10 or more "
                                              "(the run was scheduled for 24)");
  const int threads = at::get_num_threads();
  at::set_num_threads(threads == 1 ? 2 : 1);
  const auto message = refusal(tinyConfig(s, "r"), resuming());
  at::set_num_threads(threads);
  EXPECT_EQ(message.rfind("--threads: the checkpoint ", 0), 0u) << message;
  EXPECT_NE(message.find("resume with --threads " + std::to_string(threads)), std::string::npos) << message;
  // The same path, other contents (a digest of every byte).
  auto c = tinyConfig(s, "r");
  auto text = readFile(s / "corpus.txt");
  text[10] = 'X';
  writeFile(s / "corpus.txt", text);
  EXPECT_EQ(refusal(c, resuming()),
            (s / "corpus.txt").string() + ": is not the corpus the checkpoint's run trained on (its contents differ; " +
                (s / "r/checkpoint.safetensors").string() + ")");
  EXPECT_EQ(readFile(s / "r/checkpoint.safetensors"), checkpoint);  // nothing written by the refusals
  // The same contents under another directory and file name resume (it was refused:
  // "its files differ", the names were hashed).
  tinyConfig(s, "unused");  // writes corpus.txt as it was
  fs::create_directories(s / "moved");
  fs::copy_file(s / "corpus.txt", s / "moved/renamed.txt");
  c.data.corpus = s / "moved/renamed.txt";
  EXPECT_EQ(refusal(c, resuming()), "no error");
}

// One byte changed in a 1.1 MB corpus, between the blocks analyze's sampled fingerprint
// reads, and the run resumed silently on the other text.
TEST(Trainer, ResumeSeesAChangeAnywhereInTheCorpus) {
  ScratchDir s;
  auto c = tinyConfig(s, "r");
  std::string text;
  while (text.size() < 1100000) text += "the quick brown fox jumps over the lazy dog\n";
  text.resize(1100000);
  writeFile(s / "big.txt", text);
  c.data.corpus = s / "big.txt";
  train::TrainOptions stop;
  stop.stop_after = 2;
  train::runTraining(c, stop);
  text[279000] = text[279000] == 'q' ? 'z' : 'q';  // both in the vocabulary: the model's shape is the same
  writeFile(s / "big.txt", text);
  EXPECT_EQ(refusal(c, resuming()), (s / "big.txt").string() + ": is not the corpus the checkpoint's run trained on (its contents "
                                                                "differ; " + (s / "r/checkpoint.safetensors").string() + ")");
}

// The checkpoint `file` with its posgeom_train metadata edited (to make an older posgeom's).
void editCheckpointMetadata(const fs::path& file, const std::function<void(nlohmann::json&)>& edit) {
  io::SafetensorsWriter w;
  {
    const auto f = io::SafetensorsFile::open(file);
    for (const auto& [name, t] : f.tensors()) w.add(name, t.dtype, t.shape, t.data, t.nbytes);
    auto meta = nlohmann::json::parse(f.metadata().at("posgeom_train"));
    edit(meta);
    w.setMetadata("posgeom_train", meta.dump());
  }
  w.write(file);
}

// Checkpoints without a corpus_digest (before H1, or f26e8d4's sampled corpus_fingerprint)
// resume as older ones did: the corpus known by its path, its contents not checked (a warning).
TEST(Trainer, ACheckpointWithoutACorpusDigestResumesByTheCorpusPath) {
  ScratchDir s;
  train::TrainOptions stop;
  stop.stop_after = 10;
  train::runTraining(tinyConfig(s, "r"), stop);
  editCheckpointMetadata(s / "r/checkpoint.safetensors", [](nlohmann::json& meta) {
    ASSERT_TRUE(meta.contains("corpus_digest"));
    meta.erase("corpus_digest");
    meta["corpus_fingerprint"] = "0123456789abcdef";  // sampled, and not this corpus's: not compared
  });
  auto moved = tinyConfig(s, "r");
  fs::copy_file(s / "corpus.txt", s / "renamed.txt");
  moved.data.corpus = s / "renamed.txt";
  EXPECT_NE(refusal(moved, resuming()).find(": was made with another training config: data.corpus (saved "), std::string::npos);
  EXPECT_EQ(refusal(tinyConfig(s, "r"), resuming()), "no error");
}

// A finished run used to be replaced by a 5-step one with exit 0.
TEST(Trainer, ANewRunRefusesAFinishedOneAndForceReplacesIt) {
  ScratchDir s;
  auto c = tinyConfig(s, "r");
  c.optim.iterations = 4;
  train::runTraining(c, {});
  const auto model = readFile(s / "r/model.safetensors");
  train::TrainOptions stop;
  stop.stop_after = 2;
  EXPECT_NE(refusal(c, stop).find("holds a training run; pass --force to replace it"), std::string::npos);
  EXPECT_EQ(readFile(s / "r/model.safetensors"), model);
  stop.force = true;
  EXPECT_EQ(refusal(c, stop), "no error");
  EXPECT_EQ(io::readJsonFile(s / "r/training.json")["steps"], 2);
  train::TrainOptions both = resuming();
  both.force = true;
  EXPECT_NE(refusal(c, both).find("--force: "), std::string::npos);
}

// training.json said final_validation_loss -1.0 (a sentinel) before the first evaluation.
TEST(Trainer, NoValidationLossBeforeTheFirstEvaluation) {
  ScratchDir s;
  train::TrainOptions stop;
  stop.stop_after = 2;
  const auto log = train::runTraining(tinyConfig(s, "r"), stop);
  EXPECT_FALSE(train::lastValidationLoss(log));
  EXPECT_TRUE(io::readJsonFile(s / "r/training.json")["final_validation_loss"].is_null());
  const auto csv = readFile(s / "r/train_log.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_EQ(csv.find(",-1"), std::string::npos);
  EXPECT_EQ(csv.substr(csv.size() - 2), ",\n");  // an empty validation cell
}

// The 2-byte corpus was blamed on "[data]" at the first step and left train_config.json in
// the --out it had created.
TEST(Trainer, ACorpusShorterThanAWindowIsRefusedNamingItAndLeavesNothing) {
  ScratchDir s;
  auto c = tinyConfig(s, "o");
  writeFile(s / "tiny.txt", "ab");
  c.data.corpus = s / "tiny.txt";
  EXPECT_EQ(refusal(c, {}), (s / "tiny.txt").string() +
                                ": the training split has 1 tokens, fewer than one window of 33 ([model] context + 1): give a longer "
                                "corpus or a shorter context");
  EXPECT_FALSE(fs::exists(s / "o"));
  EXPECT_FALSE(fs::exists(s / ".o.posgeom-lock"));
}

}  // namespace
}  // namespace posgeom::testing
