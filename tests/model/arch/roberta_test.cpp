#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// RoBERTa against transformers' own model and outputs (tools/hf-goldens): positions from
// padding_idx + 1, and a padding token mid-sequence that the positions after it skip.
INSTANTIATE_TEST_SUITE_P(HfRoberta, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-roberta")), goldenCaseName);

// Its positions run to T + padding_idx: a window that would need a position past the table
// is refused by name, with the limit a user can give.
TEST(Roberta, WindowsPastThePositionTableAreRefused) {
  const auto loaded = model::loadModel(hfFixtureDir("hf-roberta"), model::Numerics::parse("float32", "cpu"));
  EXPECT_EQ(loaded.model->config().padding_idx, 1);
  model::ForwardRequest fits, too_long;
  fits.ids = at::full({1, 62}, 5, at::TensorOptions().dtype(at::kLong));  // positions 2..63 of 64
  EXPECT_NO_THROW(loaded.model->forward(fits));
  too_long.ids = at::full({1, 63}, 5, at::TensorOptions().dtype(at::kLong));
  try {
    loaded.model->forward(too_long);
    FAIL() << "63 positions past padding_idx 1 must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("62 positions"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
