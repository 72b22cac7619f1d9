#include "posgeom/train/training_data.h"

#include <cmath>

#include "posgeom/base/error.h"
#include "posgeom/tokenize/tokenizer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

std::vector<int64_t> encodeWith(const train::TrainingData& data, const ScratchDir& s, const std::string& text) {
  std::filesystem::create_directories(s / "tok");
  writeFile(s / "tok/tokenizer.json", data.tokenizerJson().dump());
  const auto tokenizer = tokenize::loadTokenizer(s / "tok");
  tokenize::EncodeStats stats;
  const auto ids = tokenizer->encode(text, stats);
  return {ids.begin(), ids.end()};
}

TEST(TrainingData, CharactersRoundTripThroughTheWrittenTokenizer) {
  ScratchDir s;
  const std::string text = "To be, or not to be — that is the question.\n";  // 44 characters, one of them 3 bytes
  writeFile(s / "c.txt", text + text);
  train::DataSpec spec;
  spec.corpus = s / "c.txt";
  spec.validation_fraction = 0.2;  // 88 characters: 70 to train on
  const auto data = train::openTrainingData(spec);
  EXPECT_EQ(data->describe()["train_tokens"], 70);
  const auto window = data->batch(false, 1, 69, 5, 0);  // one offset only: 0
  const auto all = encodeWith(*data, s, text + text);
  ASSERT_EQ(all.size(), 88u);
  EXPECT_EQ(window, std::vector<int64_t>(all.begin(), all.begin() + 69));
  EXPECT_THROW(data->batch(false, 1, 70, 5, 0), InputError);  // no room for a window of the whole split
  EXPECT_EQ(encodeWith(*data, s, "Q")[0], 0);  // unseen character: <unk>
}

TEST(TrainingData, BytesAreTheirOwnIds) {
  ScratchDir s;
  writeFile(s / "b.txt", std::string(100, 'a') + "\xc3\xa9");
  train::DataSpec spec;
  spec.corpus = s / "b.txt";
  spec.tokens = "bytes";
  const auto data = train::openTrainingData(spec);
  EXPECT_EQ(data->vocabSize(), 256);
  EXPECT_EQ(encodeWith(*data, s, "a\xc3\xa9"), (std::vector<int64_t>{97, 0xc3, 0xa9}));
}

TEST(TrainingData, BatchesArePureFunctionsOfSeedAndStep) {
  train::DataSpec spec;
  spec.task = "addition";
  const auto data = train::openTrainingData(spec);
  EXPECT_EQ(data->batch(false, 4, 34, 9, 17), data->batch(false, 4, 34, 9, 17));
  EXPECT_NE(data->batch(false, 4, 34, 9, 17), data->batch(false, 4, 34, 9, 18));
  EXPECT_NE(data->batch(false, 4, 34, 9, 17), data->batch(true, 4, 34, 9, 17));
  EXPECT_LT(data->describe()["unigram_validation_loss"].get<double>(), std::log(13.0));
}

TEST(TrainingData, AdditionProblemsHaveTheirDigits) {
  uint64_t state = 3;
  for (int64_t digits = 1; digits <= 12; ++digits)
    for (int i = 0; i < 50; ++i) {
      const auto a = train::randomOperand(state, digits);
      EXPECT_EQ(static_cast<int64_t>(std::to_string(a).size()), digits);
    }
  EXPECT_EQ(train::additionProblem(995, 7), "995+7=1002\n");
}

}  // namespace
}  // namespace posgeom::testing
