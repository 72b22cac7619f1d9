#include "posgeom/anova/state_merge.h"

#include <cstdio>
#include <map>

#include "posgeom/base/error.h"

namespace posgeom::anova {
namespace {

// How much a state holds, where its inputs were and what posgeom chose for the machine
// (the effective batch size, threads, the ranks of a distributed run), not what it computes.
bool describesCoverage(const std::string& key) {
  return key == "data" || key == "timings" || key == "shard" || key == "coverage" || key == "model" || key == "corpus" ||
         key == "effective" || key == "distributed";
}

std::string hintFor(const std::string& key) {
  if (key == "model_fingerprint") return ": another model (its config or weights differ)";
  if (key == "corpus_fingerprint") return ": another corpus (its files differ)";
  return "";
}

std::string joined(const std::vector<int64_t>& values) {
  std::string s;
  for (const auto v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

}  // namespace

std::string settingsDifference(const nlohmann::json& a, const nlohmann::json& b, const std::string& a_label,
                               const std::string& b_label) {
  for (const auto* side : {&a, &b})
    for (const auto& [key, value] : side->items()) {
      if (describesCoverage(key)) continue;
      const auto x = a.find(key), y = b.find(key);
      if (x == a.end() || y == b.end() || *x != *y)
        return key + " (" + a_label + " " + (x == a.end() ? std::string("none") : x->dump()) + ", " + b_label + " " +
               (y == b.end() ? std::string("none") : y->dump()) + ")" + hintFor(key);
    }
  return "";
}

std::string Coverage::str() const { return joined(shards) + "/" + std::to_string(shard_count); }

Coverage coverageOf(const AnalysisState& state) {
  Coverage c;
  const auto& s = state.settings;
  if (const auto it = s.find("coverage"); it != s.end() && it->is_object()) {
    c.shard_count = it->value("shard_count", int64_t{1});
    c.shards = it->value("shards", std::vector<int64_t>{0});
    c.complete = it->value("complete", true);
    return c;
  }
  if (const auto it = s.find("shard"); it != s.end() && it->is_string()) {
    // "i/n", as --shard wrote it
    const auto text = it->get<std::string>();
    long long index = -1, count = 0;
    if (std::sscanf(text.c_str(), "%lld/%lld", &index, &count) != 2 || count < 1 || index < 0 || index >= count)
      throw InputError("state settings", "shard '" + text + "' is not i/n with 0 <= i < n");
    c.shard_count = count;
    c.shards = {index};
  }
  if (const auto data = s.find("data"); data != s.end() && data->is_object()) c.complete = data->value("complete", true);
  return c;
}

AnalysisState mergeStates(const std::vector<NamedState>& states, const SampleCaps& caps, bool partial) {
  if (states.empty()) throw InputError("merge", "no state files");
  const auto& first = states.front();
  const auto split = coverageOf(first.state).shard_count;
  std::map<int64_t, std::string> holder;  // shard -> the file that holds it
  nlohmann::json sources = nlohmann::json::array();
  bool all_complete = true;
  for (const auto& [name, state] : states) {
    if (&state != &first.state) {
      if (const auto d = settingsDifference(first.state.settings, state.settings, first.name + ":", name + ":"); !d.empty())
        throw InputError(name, "comes from another run than " + first.name + ": " + d);
      if (state.layers.size() != first.state.layers.size())
        throw InputError(name, "holds other layers than " + first.name);
    }
    const auto c = coverageOf(state);
    if (c.shard_count != split)
      throw InputError(name, "holds shard " + c.str() + ", of another split than " + first.name + " (" +
                                 coverageOf(first.state).str() + "): their windows overlap");
    for (const auto shard : c.shards)
      if (const auto [it, added] = holder.emplace(shard, name); !added)
        throw InputError(name, "holds shard " + std::to_string(shard) + "/" + std::to_string(split) + " again: " +
                                   it->second + " holds it already (the same state twice, or a shard run twice)");
    if (!c.complete && !partial)
      throw InputError(name, "is the state of a stopped pass (" + std::to_string(state.windows) +
                                 " windows): finish it with analyze --resume, or merge with --partial to report what it holds");
    all_complete = all_complete && c.complete;
    sources.push_back({{"file", name}, {"shard", c.str()}, {"windows", state.windows}, {"complete", c.complete}});
  }
  std::vector<int64_t> held, missing;
  for (int64_t shard = 0; shard < split; ++shard) (holder.count(shard) ? held : missing).push_back(shard);
  if (!missing.empty() && !partial)
    throw InputError("merge", "shard " + joined(missing) + "/" + std::to_string(split) + " missing (the states hold " +
                                  joined(held) + "/" + std::to_string(split) +
                                  "): give every shard's state, or --partial to report only these");

  AnalysisState out = first.state;
  for (std::size_t i = 1; i < states.size(); ++i) {
    const auto& s = states[i].state;
    for (std::size_t l = 0; l < s.layers.size(); ++l) merge(out.layers[l], s.layers[l], caps);
    out.windows += s.windows;
  }
  const bool complete = all_complete && missing.empty();
  out.settings.erase("shard");
  // coverage.complete: every shard held finished (a partial merge of finished shards merges
  // on with the missing ones); data.complete: the whole run is here.
  out.settings["coverage"] = {{"shard_count", split}, {"shards", held},       {"missing", missing},
                              {"complete", all_complete}, {"partial", !complete}, {"states", sources}};
  out.settings["data"] = {{"windows", out.windows}, {"merged_states", states.size()}, {"complete", complete}};
  if (!complete) out.settings["data"]["partial"] = true;
  return out;
}

}  // namespace posgeom::anova
