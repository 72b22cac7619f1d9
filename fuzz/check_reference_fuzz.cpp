// `posgeom check`'s reference file: any JSON (or not JSON) against a fixed summary with
// layers, heads (matched by keys), strings, booleans and nulls; then the table it prints.
#include "fuzz_target.h"
#include "posgeom/jobs/check_job.h"

namespace posgeom::fuzz {
namespace {

constexpr const char* kSummary = R"({
  "data": {"windows": 40, "complete": true, "token_hash": "0123abcd"},
  "layers": [
    {"layer": 0, "relative_norm": 0.25, "screenot_rank": 6, "stable_rank": 3.5, "smooth": true},
    {"layer": 1, "relative_norm": 0.5, "screenot_rank": 7, "stable_rank": null}
  ],
  "heads": [
    {"block": 0, "head": 0, "class": "local", "etc": 0.9, "samples": 5},
    {"block": 0, "head": 1, "class": "uniform", "etc": 0.1, "samples": 5}
  ],
  "spectrum": [1.0, 0.5, 0.25]
})";

}  // namespace

void checkReference(const uint8_t* data, std::size_t size) {
  const auto dir = scratchDir() / "check";
  std::filesystem::create_directories(dir);
  const std::string summary = kSummary;
  writeBytes(dir / "summary.json", reinterpret_cast<const uint8_t*>(summary.data()), summary.size());
  writeBytes(dir / "reference.json", data, size);
  jobs::CheckJob job;
  job.report = dir.string();
  job.reference = (dir / "reference.json").string();
  const auto outcome = jobs::runCheckJob(job);
  if (outcome.table.empty()) __builtin_trap();  // a reference with values prints rows
}

}  // namespace posgeom::fuzz

POSGEOM_FUZZ_ENTRY(posgeom::fuzz::checkReference)
