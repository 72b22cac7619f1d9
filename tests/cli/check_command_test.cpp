#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(CheckCommand, ExitCodesSayWhetherSomethingMoved) {
  ScratchDir s;
  writeFile(s / "summary.json", R"({"layers": [{"layer": 0, "stable_rank": 3.0}]})");
  writeFile(s / "same.json", R"({"layers": [{"layer": 0, "stable_rank": 3.0}]})");
  writeFile(s / "moved.json", R"({"layers": [{"layer": 0, "stable_rank": 4.0}]})");
  EXPECT_EQ(runPosgeom({"check", s.path().string(), "--reference", (s / "same.json").string()}).exit_code, 0);
  const auto moved = runPosgeom({"check", (s / "summary.json").string(), "--reference", (s / "moved.json").string()});
  EXPECT_EQ(moved.exit_code, 1);
  EXPECT_NE(moved.out.find("MOVED"), std::string::npos);
  EXPECT_EQ(runPosgeom({"check", (s / "summary.json").string(), "--reference", (s / "moved.json").string(),
                        "--tolerance", "stable_rank=0.5"})
                .exit_code,
            0);
  EXPECT_EQ(runPosgeom({"check", s.path().string(), "--reference", (s / "missing.json").string()}).exit_code, 2);
  EXPECT_EQ(runPosgeom({"check", s.path().string(), "--reference", (s / "same.json").string(), "--tolerance", "x"})
                .exit_code,
            2);
}

}  // namespace
}  // namespace posgeom::testing
