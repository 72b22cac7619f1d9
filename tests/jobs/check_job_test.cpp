#include "posgeom/jobs/check_job.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

struct CheckFiles {
  ScratchDir s;
  CheckFiles() {
    writeFile(s / "summary.json", R"({"layers": [{"layer": 0, "stable_rank": 3.0, "relative_norm": 0.2}],
                                      "heads": [{"block": 0, "head": 1, "etc": 4.0}]})");
  }
  jobs::CheckJob job(const std::string& reference) {
    writeFile(s / "ref.json", reference);
    jobs::CheckJob j;
    j.report = s.path().string();
    j.reference = (s / "ref.json").string();
    return j;
  }
};

TEST(CheckJob, PerKeyTolerancesDecide) {
  CheckFiles f;
  auto job = f.job(R"({"layers": [{"layer": 0, "relative_norm": 0.21}]})");
  EXPECT_FALSE(jobs::runCheckJob(job).passed);
  job.per_key = {"relative_norm=0.1"};
  const auto outcome = jobs::runCheckJob(job);
  EXPECT_TRUE(outcome.passed);
  EXPECT_NE(outcome.table.find("2 of 2 values within tolerance"), std::string::npos) << outcome.table;
  job.per_key = {"relative_norm"};
  EXPECT_THROW(jobs::runCheckJob(job), InputError);
  job.per_key = {"relative_norm=x"};
  EXPECT_THROW(jobs::runCheckJob(job), InputError);
}

TEST(CheckJob, HeadsAreMatchedByBlockAndTheOldNamingIsRefused) {
  CheckFiles f;
  auto job = f.job(R"({"heads": [{"block": 0, "head": 1, "etc": 4.0}]})");
  EXPECT_TRUE(jobs::runCheckJob(job).passed);
  job = f.job(R"({"heads": [{"block": 0, "head": 1, "etc": 5.0}]})");
  EXPECT_FALSE(jobs::runCheckJob(job).passed);
  job = f.job(R"({"heads": [{"layer": 1, "head": 1, "etc": 4.0}]})");
  try {
    jobs::runCheckJob(job);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ref.json"), std::string::npos) << what;
    EXPECT_NE(what.find("0-based \"block\""), std::string::npos) << what;
  }
}

// --tolerance KEY for a key the reference has no value of was ignored without a word.
TEST(CheckJob, AToleranceForAnUnpinnedKeyIsBadInput) {
  CheckFiles f;
  auto job = f.job(R"({"layers": [{"layer": 0, "relative_norm": 0.21}]})");
  job.per_key = {"relative_nrm=0.1"};
  try {
    jobs::runCheckJob(job);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--tolerance relative_nrm: the reference holds no value named 'relative_nrm' (did you "
                                         "mean 'relative_norm'?)"),
              std::string::npos)
        << e.what();
  }
}

// Prose and tolerances alone leave nothing to compare.
TEST(CheckJob, AReferenceWithoutValuesIsBadInput) {
  CheckFiles f;
  EXPECT_THROW(jobs::runCheckJob(f.job(R"({"description": "m", "tolerances": {}})")), InputError);
}

}  // namespace
}  // namespace posgeom::testing
