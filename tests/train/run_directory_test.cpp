#include "posgeom/train/run_directory.h"

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/train/train_config.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;
using train::RunDirectory;
using train::RunMode;

std::string refusal(const fs::path& out, RunMode mode) {
  try {
    RunDirectory dir(out, mode);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// writeFile, with the directories it needs.
void put(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  writeFile(path, bytes);
}

// train_config.json as train writes it.
std::string posgeomTrainConfig() { return train::TrainConfig().toJson().dump(2); }

void finishedRun(const fs::path& dir) {
  for (const char* f : {"config.json", "model.safetensors", "tokenizer.json", "train_log.csv", "training.json", "checkpoint.safetensors",
                        "step_5/model.safetensors", "step_5/config.json"})
    put(dir / f, "x");
  put(dir / "train_config.json", posgeomTrainConfig());
  put(dir / "step_5/train_config.json", posgeomTrainConfig());
}

// A Hugging Face model's files (the names train writes too, no posgeom marker).
void huggingFaceModel(const fs::path& dir) {
  put(dir / "config.json", "{\"model_type\": \"gpt2\"}");
  put(dir / "model.safetensors", "weights");
  put(dir / "tokenizer.json", "{}");
}

// A finished run, an analyze report or the bundled default model used to be overwritten
// with exit 0 (a 600-step model replaced by a 5-step one).
TEST(RunDirectory, ANonEmptyOutIsRefusedAndForceReplacesOnlyATrainingRun) {
  ScratchDir s;
  EXPECT_EQ(refusal(s / "new", RunMode::kNew), "no error");
  EXPECT_FALSE(fs::exists(s / "new"));  // nothing written before prepare()
  fs::create_directories(s / "empty");
  EXPECT_EQ(refusal(s / "empty", RunMode::kNew), "no error");
  finishedRun(s / "run");
  EXPECT_EQ(refusal(s / "run", RunMode::kNew), (s / "run").string() + ": holds a training run; pass --force to replace it, or --resume to continue it");
  EXPECT_EQ(refusal(s / "run", RunMode::kForce), "no error");
  put(s / "report/summary.json", "{}");
  put(s / "report/pos_L0.csv", "");
  for (auto mode : {RunMode::kNew, RunMode::kForce})
    EXPECT_NE(refusal(s / "report", mode).find("which is not a posgeom training run's file"), std::string::npos);
  // One foreign file among a run's, even inside a step_<k>/, and --force refuses.
  finishedRun(s / "mixed");
  put(s / "mixed/step_5/notes.txt", "mine");
  EXPECT_EQ(refusal(s / "mixed", RunMode::kForce), (s / "mixed").string() +
                                                       ": holds 'step_5', which is not a posgeom training run's file; train "
                                                       "replaces only a training run (with --force), so move it or choose another --out");
  put(s / "file", "x");
  EXPECT_EQ(refusal(s / "file", RunMode::kForce), (s / "file").string() + ": exists and is not a directory");
  EXPECT_NE(refusal(s / "empty", RunMode::kResume).find("checkpoint.safetensors: no checkpoint to resume from"), std::string::npos);
  {
    RunDirectory forced(s / "run", RunMode::kForce);
    forced.prepare();
    EXPECT_TRUE(fs::is_empty(s / "run"));  // the old run's files are gone, the directory stays
    forced.keep();
  }
  EXPECT_TRUE(fs::exists(s / "report/summary.json"));
  EXPECT_TRUE(fs::exists(s / "mixed/step_5/notes.txt"));
}

// `--force` used to delete a Hugging Face model (config.json, model.safetensors,
// tokenizer.json: all names a run writes) or a lone config.json, exit 0.
TEST(RunDirectory, ForceReplacesOnlyADirectoryMarkedAsPosgeomsRun) {
  ScratchDir s;
  const std::string foreign = ": holds a model that posgeom's train did not write (no train_config.json or checkpoint.safetensors of a "
                              "posgeom training run); train replaces only its own runs (with --force), so move it or choose another --out";
  huggingFaceModel(s / "hf");
  put(s / "lone/config.json", "{}");
  huggingFaceModel(s / "other");
  put(s / "other/train_config.json", "{\"model\": {}}");  // not train's: lacks the other tables
  put(s / "other/checkpoint.safetensors", "not safetensors");
  for (const char* dir : {"hf", "lone", "other"})
    for (auto mode : {RunMode::kNew, RunMode::kForce}) EXPECT_EQ(refusal(s / dir, mode), (s / dir).string() + foreign) << dir;
  // A step_<k>/ without its own train_config.json is a model, not train's.
  huggingFaceModel(s / "steps/step_5");
  EXPECT_NE(refusal(s / "steps", RunMode::kForce).find("holds 'step_5', which is not a posgeom training run's file"), std::string::npos);
  EXPECT_EQ(readFile(s / "hf/model.safetensors"), "weights");
  EXPECT_EQ(readFile(s / "lone/config.json"), "{}");
  // Each marker alone makes it a run: train_config.json, the checkpoint, a step_<k>/'s own.
  huggingFaceModel(s / "config");
  put(s / "config/train_config.json", posgeomTrainConfig());
  huggingFaceModel(s / "checkpoint");
  io::SafetensorsWriter w;
  w.addF32("param.x", {1}, {1.0f});
  w.setMetadata("posgeom_train", "{\"step\": 5}");
  w.write(s / "checkpoint/checkpoint.safetensors");
  huggingFaceModel(s / "series");
  put(s / "series/step_5/model.safetensors", "weights");
  put(s / "series/step_5/train_config.json", posgeomTrainConfig());
  for (const char* dir : {"config", "checkpoint", "series"}) EXPECT_EQ(refusal(s / dir, RunMode::kForce), "no error") << dir;
}

TEST(RunDirectory, KnowsATrainingRunsFiles) {
  ScratchDir s;
  finishedRun(s / "r");
  put(s / "r/model.safetensors.tmp.123", "");
  put(s / "r/.step_10.partial/training.json", "");
  put(s / "r/summary.json", "");
  put(s / "r/model.safetensors.tmp.x", "");
  put(s / "r/step_x/config.json", "");
  put(s / "r/step_7/model.safetensors", "");  // no train_config.json
  for (const char* own : {"config.json", "checkpoint.safetensors", "train_log.csv", "step_5", "model.safetensors.tmp.123", ".step_10.partial"})
    EXPECT_TRUE(train::isTrainingRunEntry(s / "r" / own)) << own;
  for (const char* foreign : {"summary.json", "model.safetensors.tmp.x", "step_x", "step_7", "missing"})
    EXPECT_FALSE(train::isTrainingRunEntry(s / "r" / foreign)) << foreign;
  fs::create_symlink(s / "r/config.json", s / "r/training.json.link");
  EXPECT_FALSE(train::isTrainingRunEntry(s / "r/training.json.link"));
}

// Two runs on one --out both exited 0 with one's train_config.json beside the other's model.
TEST(RunDirectory, ASecondRunOnTheSameOutIsRefused) {
  ScratchDir s;
  RunDirectory first(s / "o", RunMode::kNew);
  const auto message = refusal(s / "o", RunMode::kNew);
  EXPECT_NE(message.find("is being written by another posgeom run"), std::string::npos) << message;
}

// A run that fails before its first checkpoint leaves nothing it wrote: no empty --out,
// no train_config.json (the 2-byte corpus left both).
TEST(RunDirectory, AFailureBeforeTheFirstCheckpointTakesBackWhatItWrote) {
  ScratchDir s;
  {
    RunDirectory dir(s / "a/o", RunMode::kNew);
    dir.prepare();
    put(s / "a/o/train_config.json", "{}");
  }
  EXPECT_FALSE(fs::exists(s / "a/o"));
  fs::create_directories(s / "b");
  {
    RunDirectory dir(s / "b", RunMode::kNew);
    dir.prepare();
    put(s / "b/train_config.json", "{}");
  }
  EXPECT_TRUE(fs::is_directory(s / "b"));  // there before: it stays, empty
  EXPECT_TRUE(fs::is_empty(s / "b"));
  {
    RunDirectory dir(s / "c", RunMode::kNew);
    dir.prepare();
    put(s / "c/checkpoint.safetensors", "x");
    dir.keep();
  }
  EXPECT_TRUE(fs::exists(s / "c/checkpoint.safetensors"));
  EXPECT_FALSE(fs::exists(s / ".c.posgeom-lock"));
}

}  // namespace
}  // namespace posgeom::testing
