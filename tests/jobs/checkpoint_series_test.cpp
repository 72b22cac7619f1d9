#include "posgeom/jobs/checkpoint_series.h"

#include <sstream>

#include "posgeom/base/error.h"
#include "captured_log.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(CheckpointSeries, AStepIsTheNumberANameEndsWithAfterAnUnderscoreOrADash) {
  EXPECT_EQ(jobs::checkpointStep("step_1200"), 1200);
  EXPECT_EQ(jobs::checkpointStep("checkpoint-500"), 500);
  EXPECT_EQ(jobs::checkpointStep("step_010"), 10);
  EXPECT_EQ(jobs::checkpointStep("step_" + std::string(18, '9')), 999999999999999999);
  for (const char* none : {"step", "1200", "step_", "step1200", "step_1e3"}) EXPECT_FALSE(jobs::checkpointStep(none).has_value()) << none;
  EXPECT_FALSE(jobs::checkpointStep("step_" + std::string(19, '9')).has_value());  // beyond int64_t
}

TEST(CheckpointSeries, APatternNamesItsDirectoriesInStepOrderAndWhatItLeavesOut) {
  ScratchDir s;
  for (const char* dir : {"step_10", "step_2", "step_100", "step_final", ".step_1"}) fs::create_directories(s / dir);
  writeFile(s / "step_5", "a file");
  EXPECT_TRUE(jobs::isCheckpointPattern((s / "step_*").string()));
  EXPECT_FALSE(jobs::isCheckpointPattern((s / "step_10").string()));
  const CapturedLog log;
  const auto found = jobs::matchingCheckpoints(s / "step_*", "sweep.toml: [models.m] model");
  // Numbers, not text (2 before 10); a directory without a step last; a hidden one not at all.
  EXPECT_EQ(found, (std::vector<fs::path>{s / "step_2", s / "step_10", s / "step_100", s / "step_final"}));
  EXPECT_NE(log.str().find("sweep.toml: [models.m] model: left out step_5: they match the pattern but are not checkpoint directories"),
            std::string::npos)
      << log.str();
  try {
    jobs::matchingCheckpoints(s / "runs-*/step_*", "w");
    ADD_FAILURE() << "a pattern in a directory's name was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "w: only the last component of a model pattern may hold * or ?");
  }
}

TEST(CheckpointSeries, ASeriesHoldsOneCheckpointAStep) {
  EXPECT_NO_THROW(jobs::requireOneCheckpointAStep({"a/step_1", "a/step_2", "a/final", "b/final"}, "w"));
  try {
    jobs::requireOneCheckpointAStep({"a/step_10", "a/step_2", "b/checkpoint-010"}, "w");
    ADD_FAILURE() << "two checkpoints of step 10 were taken";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "w: a/step_10 and b/checkpoint-010 are both step 10: a series holds one checkpoint a step");
  }
}

}  // namespace
}  // namespace posgeom::testing
