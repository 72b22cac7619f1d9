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
  const auto rows = train::evaluateAddition(s / "add", 4, 5, 1, runtime::DeviceSpec{});
  ASSERT_EQ(rows.size(), 4u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].digits, static_cast<int64_t>(i + 1));
    EXPECT_EQ(rows[i].samples, 5);
    EXPECT_LE(rows[i].correct, 5);
  }
  // 18-digit operands need 1 + 18 + 1 + 18 + 1 prompt positions and 20 more: beyond 40.
  EXPECT_THROW(train::evaluateAddition(s / "add", 18, 1, 1, runtime::DeviceSpec{}), InputError);
}

std::string refusal(const std::filesystem::path& model) {
  try {
    train::evaluateAddition(model, 2, 1, 1, runtime::DeviceSpec{});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// A text model scored 0.000 with exit 0; a model without a tokenizer was told to use
// --tokenizer, which eval-addition does not have.
TEST(AdditionEval, RefusesAModelNotTrainedForAddition) {
  ScratchDir s;
  std::string text;
  for (int i = 0; i < 100; ++i) text += "12+34=46 is a sum, and so is 5+5=10\n";
  writeFile(s / "c.txt", text);
  train::TrainConfig c;
  c.model = {1, 2, 32, 16, 16, 0.0, true, "learned"};
  c.data.corpus = s / "c.txt";
  c.optim.iterations = 1;
  c.optim.batch_size = 2;
  c.run.eval_batches = 1;
  c.run.out = s / "text";
  train::runTraining(c, {});  // a char tokenizer with every digit, '+', '=' and newline
  EXPECT_EQ(refusal(s / "text"), (s / "text").string() +
                                     ": was trained with [data] task = \"text\" (its train_config.json); eval-addition measures a "
                                     "model trained with [data] task = \"addition\"");
  // Without train_config.json, a tokenizer that has no token for '+' is not an addition model's.
  std::filesystem::remove(s / "text/train_config.json");
  std::string no_plus;
  for (int i = 0; i < 20; ++i) no_plus += "0123456789=\nabc def ghi jkl mno pqr stu vwx yz ";
  writeFile(s / "c.txt", no_plus);
  c.run.out = s / "noplus";
  train::runTraining(c, {});
  std::filesystem::remove(s / "noplus/train_config.json");
  EXPECT_EQ(refusal(s / "noplus"), (s / "noplus").string() +
                                       ": its tokenizer has no token of its own for '+'; eval-addition measures a model trained "
                                       "with [data] task = \"addition\"");
  std::filesystem::remove(s / "noplus/tokenizer.json");
  const auto message = refusal(s / "noplus");
  EXPECT_EQ(message, (s / "noplus").string() + ": has no tokenizer (tokenizer.json, as posgeom train writes it); eval-addition "
                                                 "measures a model trained with [data] task = \"addition\"");
  EXPECT_EQ(message.find("--tokenizer"), std::string::npos);
}

TEST(AdditionEval, TableAndCsvCarryEveryRow) {
  const std::vector<train::AdditionAccuracy> rows{{1, 4, 3}, {12, 5, 0}};
  EXPECT_EQ(train::additionTable(rows), "digits  accuracy\n     1     0.750\n    12     0.000\n");
  EXPECT_EQ(train::additionCsv(rows), "digits,samples,correct,accuracy\n1,4,3,0.750000\n12,5,0,0.000000\n");
}

}  // namespace
}  // namespace posgeom::testing
