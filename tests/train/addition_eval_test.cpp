#include "posgeom/train/addition_eval.h"

#include "posgeom/base/error.h"
#include "posgeom/train/trainer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(AdditionEval, AccuracyByLengthAndPositionLimits) {
  ScratchDir s;
  train::TrainConfig c;
  c.model = {1, 2, 32, 33, 40, 0.0, true, "learned"};
  c.data.task = "addition";
  c.data.digits = 3;
  c.optim.iterations = 6;
  c.optim.batch_size = 4;
  c.optim.warmup = 1;
  c.run.eval_interval = 6;
  c.run.eval_batches = 1;
  c.run.out = s / "add";
  train::runTraining(c, {});
  const auto rows = train::evaluateAddition(s / "add", 4, 5, 1, "cpu");
  ASSERT_EQ(rows.size(), 4u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].digits, static_cast<int64_t>(i + 1));
    EXPECT_EQ(rows[i].samples, 5);
    EXPECT_LE(rows[i].correct, 5);
  }
  // 18-digit operands need 1 + 18 + 1 + 18 + 1 prompt positions and 20 more: beyond 40.
  EXPECT_THROW(train::evaluateAddition(s / "add", 18, 1, 1, "cpu"), InputError);
}

TEST(AdditionEval, TableAndCsvCarryEveryRow) {
  const std::vector<train::AdditionAccuracy> rows{{1, 4, 3}, {12, 5, 0}};
  EXPECT_EQ(train::additionTable(rows), "digits  accuracy\n     1     0.750\n    12     0.000\n");
  EXPECT_EQ(train::additionCsv(rows), "digits,samples,correct,accuracy\n1,4,3,0.750000\n12,5,0,0.000000\n");
}

}  // namespace
}  // namespace posgeom::testing
