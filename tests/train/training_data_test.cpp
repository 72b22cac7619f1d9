#include "posgeom/train/training_data.h"

#include <algorithm>
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

// The randomisation experiment: level 1 replaces the second half of every training window
// with uniform ids, level 2 all of it; the clean half and the validation windows stay.
TEST(TrainingData, NoiseLevelsRandomiseTheirPartOfEachTrainingWindow) {
  ScratchDir s;
  std::string text;
  for (int i = 0; i < 400; ++i) text += "abcdefgh"[i % 8];  // a periodic corpus: random ids stand out
  writeFile(s / "p.txt", text);
  train::DataSpec spec;
  spec.corpus = s / "p.txt";
  const auto clean = train::openTrainingData(spec);
  spec.noise = 1;
  const auto half = train::openTrainingData(spec);
  spec.noise = 2;
  const auto whole = train::openTrainingData(spec);
  const int64_t batch = 6, length = 33;
  const auto c = clean->batch(false, batch, length, 4, 9), h = half->batch(false, batch, length, 4, 9),
             w = whole->batch(false, batch, length, 4, 9);
  int64_t changed_first = 0, changed_second = 0, changed_whole = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < length; ++i) {
      const auto k = static_cast<std::size_t>(b * length + i);
      (i < length / 2 ? changed_first : changed_second) += h[k] != c[k];
      changed_whole += w[k] != c[k];
      EXPECT_GE(h[k], 0);
      EXPECT_LT(h[k], clean->vocabSize());
      EXPECT_LT(w[k], clean->vocabSize());
    }
  EXPECT_EQ(changed_first, 0);  // the first 16 of each window as the corpus has them
  // Uniform over the 9 ids (8 letters and <unk>): 8/9 of the randomised ids differ.
  EXPECT_GT(changed_second, batch * 17 * 6 / 9);
  EXPECT_GT(changed_whole, batch * length * 6 / 9);
  EXPECT_EQ(half->batch(false, batch, length, 4, 9), h);   // a pure function of (seed, step), as before
  EXPECT_NE(half->batch(false, batch, length, 4, 10), h);
  EXPECT_EQ(whole->batch(true, batch, length, 4, 9), clean->batch(true, batch, length, 4, 9));  // validation is clean
}

TEST(TrainingData, AdditionProblemsHaveTheirDigits) {
  uint64_t state = 3;
  for (int64_t digits = 1; digits <= 12; ++digits)
    for (int i = 0; i < 50; ++i) {
      const auto a = train::randomOperand(state, digits);
      EXPECT_EQ(static_cast<int64_t>(std::to_string(a).size()), digits);
    }
  EXPECT_EQ(train::additionProblem(995, 7), "995+7=1002\n");
  EXPECT_EQ(train::additionProblem(995, 7, {true, true}), "995+7=2001\n");  // the paper's reversed sum
}

// Without carries every column of the two operands sums below 10, lengths as asked (b's
// leading digit never 0), and the draw with carries is the plain one.
TEST(TrainingData, OperandsWithoutCarries) {
  uint64_t state = 7;
  for (int64_t da = 1; da <= 9; ++da)
    for (int64_t db = 1; db <= 9; ++db)
      for (int i = 0; i < 40; ++i) {
        const auto [a, b] = train::randomOperands(state, da, db, false);
        EXPECT_EQ(static_cast<int64_t>(std::to_string(a).size()), da);
        ASSERT_EQ(static_cast<int64_t>(std::to_string(b).size()), db) << a << " " << b;
        for (uint64_t x = a, y = b; x > 0 || y > 0; x /= 10, y /= 10) EXPECT_LT(x % 10 + y % 10, 10u) << a << "+" << b;
      }
  uint64_t s1 = 11, s2 = 11;
  const auto [a, b] = train::randomOperands(s1, 5, 3, true);
  EXPECT_EQ(a, train::randomOperand(s2, 5));
  EXPECT_EQ(b, train::randomOperand(s2, 3));
}

// Loss weights on the answers only: the targets after "=" through their "\n"; unknown at a
// window's start until a "=" or "\n" says where it is.
TEST(TrainingData, AnswerWeightsCoverTheAnswersOnly) {
  // "1+2=3\n45+5=05" as ids, then "7\n9=9\n1+1=2\n3", a window that starts inside an answer.
  const std::vector<int64_t> ids{1, 10, 2, 11, 3, 12, 4, 5, 10, 5, 11, 0, 5,  //
                                 7, 12, 9, 11, 9, 12, 1, 10, 1, 11, 2, 12, 3};
  const auto w = train::answerWeights(ids, 2, 13);
  // Targets are ids 1..12 of each window.
  EXPECT_EQ(w, (std::vector<float>{0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1,  //
                                   0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0}));
  train::DataSpec spec;
  spec.task = "addition";
  EXPECT_TRUE(train::openTrainingData(spec)->lossWeights(ids, 2, 13).empty());  // off unless asked
  spec.answer_loss = true;
  EXPECT_EQ(train::openTrainingData(spec)->lossWeights(ids, 2, 13), w);
}

// The addition stream as configured: reversed sums, no carries, operand lengths in
// min_digits..digits; the format recorded beside a trained model is the one evaluated.
TEST(TrainingData, AdditionVariantsAsConfigured) {
  ScratchDir s;
  train::DataSpec spec;
  spec.task = "addition";
  spec.digits = 4;
  spec.min_digits = 3;
  spec.reverse_sum = true;
  spec.carries = false;
  const auto data = train::openTrainingData(spec);
  const auto ids = data->batch(true, 1, 400, 1, 0);
  std::string text;
  for (const auto id : ids) text += id < 10 ? static_cast<char>('0' + id) : id == 10 ? '+' : id == 11 ? '=' : '\n';
  int problems = 0;
  for (std::size_t start = text.find('\n') + 1, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string p = text.substr(start, end - start);
    const auto plus = p.find('+'), eq = p.find('=');
    const std::string a = p.substr(0, plus), b = p.substr(plus + 1, eq - plus - 1);
    std::string sum = p.substr(eq + 1);
    std::reverse(sum.begin(), sum.end());
    EXPECT_GE(a.size(), 3u);
    EXPECT_LE(b.size(), 4u);
    EXPECT_EQ(std::stoull(a) + std::stoull(b), std::stoull(sum)) << p;
    EXPECT_EQ(std::to_string(std::stoull(a) + std::stoull(b)).size(), std::max(a.size(), b.size())) << p;  // no carry out
    ++problems;
  }
  EXPECT_GT(problems, 20);
  EXPECT_EQ(data->describe()["reverse_sum"], true);
  EXPECT_EQ(train::trainedAdditionFormat(s.path()).reverse_sum, false);  // no train_config.json
  writeFile(s / "train_config.json", R"({"data": {"reverse_sum": true, "carries": false}})");
  const auto format = train::trainedAdditionFormat(s.path());
  EXPECT_TRUE(format.reverse_sum);
  EXPECT_FALSE(format.carries);
}

// window = "problem": each window is "\n", one whole problem from position 1, then "\n"
// padding, the layout eval-addition prompts in; with answer_loss only the sum and its
// newline are targets.
TEST(TrainingData, OneProblemPerWindowStartsAtPositionOne) {
  train::DataSpec spec;
  spec.task = "addition";
  spec.digits = 3;
  spec.reverse_sum = true;
  spec.answer_loss = true;
  spec.window = "problem";
  const auto data = train::openTrainingData(spec);
  const int64_t length = 3 * 3 + 5 + 2;
  const auto ids = data->batch(false, 16, length, 4, 2);
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(16 * length));
  const auto weights = data->lossWeights(ids, 16, length);
  for (int64_t b = 0; b < 16; ++b) {
    std::string text;
    for (int64_t i = 0; i < length; ++i) {
      const auto id = ids[static_cast<std::size_t>(b * length + i)];
      text += id < 10 ? static_cast<char>('0' + id) : id == 10 ? '+' : id == 11 ? '=' : '\n';
    }
    ASSERT_EQ(text[0], '\n');
    const auto end = text.find('\n', 1);
    const std::string p = text.substr(1, end - 1);
    EXPECT_EQ(text.find_first_not_of('\n', end), std::string::npos) << "only padding after the problem: " << text;
    const auto plus = p.find('+'), eq = p.find('=');
    ASSERT_NE(eq, std::string::npos) << p;
    std::string sum = p.substr(eq + 1);
    std::reverse(sum.begin(), sum.end());
    EXPECT_EQ(std::stoull(p.substr(0, plus)) + std::stoull(p.substr(plus + 1, eq - plus - 1)), std::stoull(sum)) << p;
    // Targets are ids 1..length-1: weight 1 exactly on the sum's digits and its newline.
    for (int64_t t = 1; t < length; ++t) {
      const bool answer = static_cast<std::size_t>(t) > 1 + eq && static_cast<std::size_t>(t) <= end;
      EXPECT_EQ(weights[static_cast<std::size_t>(b * (length - 1) + t - 1)], answer ? 1.0f : 0.0f) << text << " target " << t;
    }
  }
  EXPECT_EQ(data->batch(true, 4, length, 4, 0), data->batch(true, 4, length, 4, 0));
  EXPECT_NE(data->batch(false, 4, length, 4, 0), data->batch(false, 4, length, 4, 1));
  EXPECT_EQ(data->describe()["window"], "problem");
  EXPECT_THROW(data->batch(false, 1, 8, 4, 0), InputError);  // a window shorter than a problem
}

}  // namespace
}  // namespace posgeom::testing
