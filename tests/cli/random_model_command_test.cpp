#include <nlohmann/json.hpp>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using Args = std::vector<std::string>;

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

TEST(RandomModelCommand, OutHoldsOnlyARandomModelItMayReplace) {
  // It used to write config.json and model.safetensors into any directory, over a
  // downloaded model's too, with exit 0.
  ScratchDir s;
  const Args make{"random-model", "--arch", "llama", "--layers", "1", "--dim", "32", "--heads", "2", "--kv-heads", "1"};
  auto with = [&](Args more) {
    Args args = make;
    args.insert(args.end(), more.begin(), more.end());
    return runPosgeom(args);
  };
  ASSERT_EQ(with({"--out", (s / "m").string()}).exit_code, 0);
  const auto first = readFile(s / "m/model.safetensors");
  auto r = with({"--out", (s / "m").string(), "--seed", "9"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds a checkpoint; pass --force to replace it"), std::string::npos) << r.err;
  EXPECT_EQ(readFile(s / "m/model.safetensors"), first);
  r = with({"--out", (s / "m").string(), "--seed", "9", "--force"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(readFile(s / "m/model.safetensors"), first);

  // Anything else there is the user's, --force or not.
  writeFile(s / "m/notes.txt", "mine");
  r = with({"--out", (s / "m").string(), "--force"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds 'notes.txt', which random-model does not write"), std::string::npos) << r.err;
  EXPECT_EQ(readFile(s / "m/notes.txt"), "mine");

  // A Hugging Face model of just these two files is not a random model.
  const auto hf = copyFixtureModel("tiny-gpt2", s.path());
  const auto weights = readFile(hf / "model.safetensors");
  r = with({"--out", hf.string(), "--force"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds a model that random-model did not write"), std::string::npos) << r.err;
  EXPECT_EQ(readFile(hf / "model.safetensors"), weights);
}

}  // namespace
}  // namespace posgeom::testing
