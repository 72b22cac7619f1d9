#include <nlohmann/json.hpp>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(RandomModelCommand, WritesAModelThatInspectReads) {
  ScratchDir s;
  const auto dir = (s / "m").string();
  auto r = runPosgeom({"random-model", "--arch", "bloom", "--layers", "2", "--dim", "48", "--heads", "6", "--out", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = runPosgeom({"inspect", "--json", "--model", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info["heads"], 6);
  EXPECT_EQ(info["layers"], 2);
}

}  // namespace
}  // namespace posgeom::testing
