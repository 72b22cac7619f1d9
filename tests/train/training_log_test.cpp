#include "posgeom/train/training_log.h"

#include <gtest/gtest.h>

namespace posgeom::train {
namespace {

// What a save writes, a resume reads back: every value to its 9 printed digits, and no
// validation loss where none was evaluated.
TEST(TrainingLog, ReadsBackWhatItWrites) {
  const std::vector<LogRow> log{{1, 0.001, 4.25, std::nullopt}, {2, 0.000999, 3.0625, 2.5}, {3, 1e-7, 1.0 / 3.0, std::nullopt}};
  const auto csv = logCsv(log);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "step,learning_rate,train_loss,validation_loss");
  EXPECT_NE(csv.find("\n2,0.000999,3.0625,2.5\n"), std::string::npos) << csv;
  const auto back = parseLog(csv);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[1].step, 2);
  EXPECT_EQ(back[1].validation_loss, 2.5);
  EXPECT_FALSE(back[0].validation_loss.has_value());
  EXPECT_DOUBLE_EQ(back[2].train_loss, 0.333333333);  // 9 significant digits
  EXPECT_EQ(back[2].learning_rate, 1e-7);
}

}  // namespace
}  // namespace posgeom::train
