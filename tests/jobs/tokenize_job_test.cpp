#include "posgeom/jobs/tokenize_job.h"

#include <nlohmann/json.hpp>

#include <cstring>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(TokenizeJob, JsonArrayOfTheWholeInput) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  ScratchDir s;
  writeFile(s / "in.txt", "Hello world");
  jobs::TokenizeJob job;
  job.tokenizer = sharedDir() / "data/tokenizers/gpt2";
  job.input = (s / "in.txt").string();
  job.out = s / "ids.json";
  const auto summary = jobs::runTokenizeJob(job);
  EXPECT_EQ(nlohmann::json::parse(readFile(job.out)), nlohmann::json({15496, 995}));
  EXPECT_EQ(summary.tokens, 2);
}

TEST(TokenizeJob, BinWithSidecarAndSpecialTokens) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/bert-base-uncased/vocab.txt");
  ScratchDir s;
  writeFile(s / "in.txt", "hello");
  jobs::TokenizeJob job;
  job.tokenizer = sharedDir() / "data/tokenizers/bert-base-uncased";
  job.input = (s / "in.txt").string();
  job.format = "bin";
  job.out = s / "tokens.bin";
  job.add_special = true;
  jobs::runTokenizeJob(job);
  const auto bytes = readFile(job.out);
  ASSERT_EQ(bytes.size(), 6u);  // [CLS] hello [SEP] as uint16
  std::vector<uint16_t> ids(3);
  std::memcpy(ids.data(), bytes.data(), 6);
  EXPECT_EQ(ids, (std::vector<uint16_t>{101, 7592, 102}));
  const auto sidecar = nlohmann::json::parse(readFile(s / "tokens.json"));
  EXPECT_EQ(sidecar["dtype"], "uint16");
  EXPECT_EQ(sidecar["tokens"], 3);
}

TEST(TokenizeJob, LargeVocabulariesWriteUint32) {
  ScratchDir s;
  writeFile(s / "tok" / "x", "");
  std::filesystem::create_directories(s / "tok");
  writeFile(s / "tok" / "tokenizer.json",
            R"({"pre_tokenizer": {"type": "WhitespaceSplit"},
                "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "big": 70000}}})");
  writeFile(s / "in.txt", "big");
  jobs::TokenizeJob job;
  job.tokenizer = s / "tok";
  job.input = (s / "in.txt").string();
  job.format = "bin";
  job.out = s / "t.bin";
  const auto summary = jobs::runTokenizeJob(job);
  EXPECT_EQ(summary.dtype, "uint32");
  const auto bytes = readFile(job.out);
  uint32_t id = 0;
  ASSERT_EQ(bytes.size(), 4u);
  std::memcpy(&id, bytes.data(), 4);
  EXPECT_EQ(id, 70000u);
}

TEST(TokenizeJob, BinNeedsAnOutputFile) {
  jobs::TokenizeJob job;
  job.tokenizer = "/nonexistent";
  job.format = "bin";
  EXPECT_THROW(jobs::runTokenizeJob(job), InputError);
}

}  // namespace
}  // namespace posgeom::testing
