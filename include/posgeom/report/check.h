#pragma once
// `posgeom check`: the numbers of a report against pinned reference numbers, for CI.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace posgeom::report {

// A reference's own keys beside the values it pins (a subset of summary.json's).
inline constexpr const char* kReferenceTolerances = "tolerances";
inline constexpr const char* kReferenceDescription = "description";

struct Tolerance {
  double rtol = 1e-6;
  double atol = 1e-9;
};

struct CheckOptions {
  Tolerance tolerance;
  std::map<std::string, Tolerance> per_key;  // by key name, e.g. "relative_norm"
};

struct CheckRow {
  std::string path;  // e.g. layers[layer=3].stable_rank
  std::string reference;
  std::string actual;  // "missing" when absent
  double abs_diff = 0;
  double rel_diff = 0;
  bool ok = true;
  bool numeric = false;  // two numbers compared: abs_diff and rel_diff mean something
};

// Every number in `reference` is looked up in `summary` at the same path; arrays of
// objects with a "layer" or "block" (and "head") key are matched by those keys, not by
// position. Heads are named by their 0-based "block": a reference whose heads carry a
// "layer" (the older naming, one higher) is bad input, named by `where`.
// Floats must lie within atol + rtol |reference|; integers must match exactly unless
// their key has its own tolerance; strings, booleans and nulls must be equal. A top-level
// "tolerances" object in the reference, {"key": {"rtol": r, "atol": a}}, gives per-key
// tolerances (options.per_key wins); a top-level "description" is prose, not compared.
// A reference that is not an object, or a tolerance that is not a number >= 0, is bad
// input (InputError naming `where`), as are negative tolerances in `options`, a tolerance
// in `options` for a key the reference has no value of, and a value of
// another kind than the report's at its place (a string where the report has a number;
// null matches any kind: it is an undefined number).
std::vector<CheckRow> checkAgainstReference(const nlohmann::json& summary, const nlohmann::json& reference,
                                            const CheckOptions& options, const std::string& where = "reference");
// The rows as an aligned table; regressions first.
std::string formatCheck(const std::vector<CheckRow>& rows, bool all_rows);

}  // namespace posgeom::report
