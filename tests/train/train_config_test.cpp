#include "posgeom/train/train_config.h"

#include <cmath>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// What readTrainConfig says of `text` written to `file` ("no error" when it reads).
std::string configError(const std::filesystem::path& file, const std::string& text) {
  writeFile(file, text);
  try {
    train::readTrainConfig(file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TrainConfig, ReadsTablesAndResolvesTheCorpus) {
  ScratchDir s;
  writeFile(s / "t.toml", "[model]\nlayers = 2\nheads = 2\nwidth = 32\ncontext = 16\nposition_encoding = \"alibi\"\n"
                          "[data]\ncorpus = \"text.txt\"\ntokens = \"bytes\"\n[optim]\niterations = 10\ndecay = \"linear\"\n");
  const auto c = train::readTrainConfig(s / "t.toml");
  EXPECT_EQ(c.model.layers, 2);
  EXPECT_EQ(c.model.positions, 16);  // defaults to the context
  EXPECT_EQ(c.model.position_encoding, "alibi");
  EXPECT_EQ(c.data.corpus, s / "text.txt");
  EXPECT_EQ(c.optim.decay, "linear");
  EXPECT_EQ(c.toJson()["data"]["tokens"], "bytes");
  EXPECT_EQ(c.data.noise, 0);
  EXPECT_FALSE(c.toJson()["data"].contains("noise"));  // saved configs without it still resume
  writeFile(s / "n.toml", "[data]\ncorpus = \"text.txt\"\nnoise = 2\n");
  EXPECT_EQ(train::readTrainConfig(s / "n.toml").toJson()["data"]["noise"], 2);
  writeFile(s / "a.toml", "[data]\ntask = \"addition\"\nreverse_sum = true\ncarries = false\nmin_digits = 2\n");
  const auto a = train::readTrainConfig(s / "a.toml");
  EXPECT_TRUE(a.data.reverse_sum);
  EXPECT_FALSE(a.toJson()["data"]["carries"]);
  EXPECT_EQ(a.toJson()["data"]["min_digits"], 2);
  EXPECT_FALSE(c.toJson()["run"].contains("save_every"));
  writeFile(s / "s.toml", "[data]\ncorpus = \"text.txt\"\n[run]\nsave_every = 50\n");
  EXPECT_EQ(train::readTrainConfig(s / "s.toml").toJson()["run"]["save_every"], 50);
}

TEST(TrainConfig, BadValuesNameTheFileAndTable) {
  ScratchDir s;
  auto message = [&](const std::string& text) { return configError(s / "b.toml", text); };
  const std::string f = (s / "b.toml").string();
  EXPECT_EQ(message("[model]\nwidht = 3\n"), f + ": [model] has no key 'widht'");
  EXPECT_EQ(message("[model]\nwidth = 30\nheads = 4\n[data]\ncorpus = \"x\"\n"), f + ": [model] width must be a multiple of heads");
  EXPECT_EQ(message("[data]\ntask = \"poetry\"\n"), f + ": [data] task must be text or addition");
  EXPECT_EQ(message("[optim]\nlearning_rate = \"fast\"\n[data]\ncorpus = \"x\"\n"), f + ": [optim] learning_rate has the wrong type");
  EXPECT_EQ(message("[training]\n"), f + ": unknown table 'training' (model, data, optim, run)");
  EXPECT_EQ(message("[data]\ncorpus = \"x\"\nnoise = 3\n"), f + ": [data] noise must be 0, 1 or 2");
  EXPECT_EQ(message("[data]\ntask = \"addition\"\ndigits = 3\nmin_digits = 4\n"), f + ": [data] min_digits must be 1..digits");
  EXPECT_EQ(message("[data]\ncorpus = \"x\"\nanswer_loss = true\n"), f + ": [data] answer_loss is for the addition task");
  EXPECT_EQ(message("[data]\ncorpus = \"x\"\nwindow = \"problem\"\n"), f + ": [data] window is for the addition task");
  EXPECT_EQ(message("[data]\ntask = \"addition\"\nwindow = \"row\"\n"), f + ": [data] window must be stream or problem");
  EXPECT_EQ(message("[model]\ncontext = 15\n[data]\ntask = \"addition\"\ndigits = 4\nwindow = \"problem\"\n"),
            f + ": [model] context 15 is too short for one 4-digit problem per window (needs 16)");
  EXPECT_EQ(message("[data]\ncorpus = \"x\"\n[run]\nsave_every = -5\n"),
            f + ": [run] save_every must be 0 (off) or a positive number of steps");
  // Floats where whole numbers go (nan, 1e30, 2.5) used to be converted: undefined for nan.
  for (const char* width : {"+nan", "1e30", "2.5"})
    EXPECT_EQ(message("[model]\nwidth = " + std::string(width) + "\n"), f + ": [model] width must be a whole number") << width;
}

// Values that used to be accepted and train NaN (learning_rate = inf), an invalid Adam
// (beta2 1.5), a floor above the learning rate, or wrap (seed -7 as 2^64 - 7).
TEST(TrainConfig, NonFiniteFloatsBetasFloorAndNegativeSeedAreRefused) {
  ScratchDir s;
  auto message = [&](const std::string& text) { return configError(s / "b.toml", "[data]\ncorpus = \"x\"\n" + text); };
  const std::string f = (s / "b.toml").string();
  EXPECT_EQ(message("[optim]\nlearning_rate = inf\n"), f + ": [optim] learning_rate must be a finite number (got inf)");
  EXPECT_EQ(message("[optim]\nlearning_rate = nan\n"), f + ": [optim] learning_rate must be a finite number (got nan)");
  EXPECT_EQ(message("[optim]\nweight_decay = -inf\n"), f + ": [optim] weight_decay must be a finite number (got -inf)");
  EXPECT_EQ(message("[model]\ndropout = nan\n"), f + ": [model] dropout must be a finite number (got nan)");
  EXPECT_EQ(message("[optim]\nbeta2 = 1.5\n"), f + ": [optim] beta1 and beta2 must be in [0, 1)");
  EXPECT_EQ(message("[optim]\nbeta1 = 1.0\n"), f + ": [optim] beta1 and beta2 must be in [0, 1)");
  EXPECT_EQ(message("[optim]\nbeta1 = -0.1\n"), f + ": [optim] beta1 and beta2 must be in [0, 1)");
  EXPECT_EQ(message("[optim]\nmin_learning_rate = 1\nlearning_rate = 0.002\n"),
            f + ": [optim] min_learning_rate 1 must be in [0, learning_rate 0.002]");
  EXPECT_EQ(message("[optim]\ngrad_clip = -1\n"), f + ": [optim] weight_decay and grad_clip must be >= 0 (grad_clip 0: none)");
  EXPECT_EQ(message("[run]\nseed = -7\n"), f + ": [run] seed must be a whole number >= 0 (got -7)");
  EXPECT_EQ(message("[run]\nseed = 7\n"), "no error");
  // A default is never the reason for an error: the floor 1e-4 is cut to a smaller rate.
  writeFile(s / "low.toml", "[data]\ncorpus = \"x\"\n[optim]\nlearning_rate = 5e-5\n");
  EXPECT_EQ(train::readTrainConfig(s / "low.toml").optim.min_learning_rate, 5e-5);
  EXPECT_EQ(train::readTrainConfig(s / "low.toml").source, s / "low.toml");
}

TEST(TrainConfig, EveryConfigInTheRepositoryReads) {
  int read = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(POSGEOM_SOURCE_DIR) / "configs/train")) {
    const auto c = train::readTrainConfig(e.path());
    const auto beside = std::filesystem::path(POSGEOM_SOURCE_DIR) / "../shared";  // where the configs look
    if (c.data.task == "text" && c.data.corpus.string().find("shared") != std::string::npos && std::filesystem::exists(beside)) {
      EXPECT_TRUE(std::filesystem::exists(c.data.corpus)) << e.path();  // ../../../shared resolved from configs/train
    }
    ++read;
  }
  EXPECT_GE(read, 9);
  for (int n = 0; n <= 2; ++n)  // the randomisation experiment's three levels
    EXPECT_EQ(train::readTrainConfig(std::filesystem::path(POSGEOM_SOURCE_DIR) / ("configs/train/randomised-cpu-" + std::to_string(n) + ".toml"))
                  .data.noise,
              n);
  const auto paper = train::readTrainConfig(std::filesystem::path(POSGEOM_SOURCE_DIR) / "configs/train/shakespeare-char.toml");
  EXPECT_EQ(paper.model.layers, 6);
  EXPECT_EQ(paper.model.width, 384);
  EXPECT_EQ(paper.optim.iterations, 5000);
  EXPECT_EQ(paper.optim.warmup, 100);
  const auto addition = train::readTrainConfig(std::filesystem::path(POSGEOM_SOURCE_DIR) / "configs/train/addition.toml");
  EXPECT_EQ(addition.model.context, 34);  // the paper's 33 and the newline each window starts with
  EXPECT_EQ(addition.data.digits, 10);
  EXPECT_EQ(addition.optim.iterations, 10000);
  EXPECT_TRUE(addition.data.reverse_sum && addition.data.answer_loss);
  EXPECT_EQ(addition.data.window, "problem");
  const auto larger = train::readTrainConfig(std::filesystem::path(POSGEOM_SOURCE_DIR) / "configs/train/addition-8l8h512d.toml");
  EXPECT_EQ(larger.model.layers, 8);
  EXPECT_EQ(larger.model.heads, 8);
  EXPECT_EQ(larger.model.width, 512);
}

TEST(TrainConfig, WarmupThenCosineOrLinearDecay) {
  train::OptimizerSpec o;
  o.learning_rate = 1.0;
  o.min_learning_rate = 0.1;
  o.warmup = 9;
  o.iterations = 109;
  EXPECT_NEAR(train::learningRate(o, 0), 0.1, 1e-12);  // (step + 1) / (warmup + 1)
  EXPECT_NEAR(train::learningRate(o, 9), 1.0, 1e-12);  // warm-up done
  EXPECT_NEAR(train::learningRate(o, 59), 0.1 + 0.9 * 0.5, 1e-12);  // halfway: cos(pi/2)
  EXPECT_NEAR(train::learningRate(o, 109), 0.1, 1e-12);
  o.decay = "linear";
  EXPECT_NEAR(train::learningRate(o, 34), 0.1 + 0.9 * 0.75, 1e-12);
  o.decay = "constant";
  EXPECT_EQ(train::learningRate(o, 100), 1.0);
}

}  // namespace
}  // namespace posgeom::testing
