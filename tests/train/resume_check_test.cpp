#include "posgeom/train/resume_check.h"

#include <gtest/gtest.h>

namespace posgeom::train {
namespace {

// The first differing key of either side is named with both values; a key only one side
// has is "none" on the other.
TEST(ResumeCheck, ConfigDifferenceNamesTheFirstKeyThatDiffers) {
  const nlohmann::json saved = {{"optim", {{"learning_rate", 0.001}, {"warmup", 10}}}, {"model", {{"layers", 2}}}};
  EXPECT_EQ(configDifference(saved, saved), "");
  auto now = saved;
  now["optim"]["learning_rate"] = 0.002;
  EXPECT_EQ(configDifference(saved, now), "optim.learning_rate (saved 0.001, now 0.002)");
  now = saved;
  now["model"]["heads"] = 4;
  EXPECT_EQ(configDifference(saved, now), "model.heads (saved none, now 4)");
}

// The addition task is generated from its config alone: no corpus to digest.
TEST(ResumeCheck, TheAdditionTaskHasNoCorpusDigest) {
  DataSpec data;
  data.task = "addition";
  EXPECT_EQ(corpusDigest(data), "");
}

}  // namespace
}  // namespace posgeom::train
