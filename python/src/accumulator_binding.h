#pragma once
// posgeom.Accumulator: batches of hidden states from Python reduced to a state's
// statistics by the library's accumulator, on the device the tensors are on.
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>
#include <nanobind/nanobind.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/anova/accumulator.h"
#include "posgeom/anova/state_file.h"
#include "posgeom/pass/plan.h"

namespace posgeom::python {
namespace nb = nanobind;

class PyAccumulator {
 public:
  // `hidden_states`: how many hidden states add() takes (0: any number above the largest index).
  PyAccumulator(anova::AccumulatorOptions options, int64_t seq_len, int64_t dim, int64_t hidden_states,
                nlohmann::json settings, std::optional<at::Device> device);
  // add(hidden, batch=None, labels=None, windows=None, attention_inputs=None): see the docstring in bindAccumulator.
  void add(nb::handle hidden, nb::handle batch, nb::handle labels, nb::handle windows, nb::handle attention_inputs);
  void merge(const anova::AnalysisState& other);
  anova::AnalysisState state() const;
  int64_t windows() const { return windows_; }
  std::string repr() const;
  // The shard its windows are of (default indices: shard.index + shard.count * k), and,
  // for one made by Windows.accumulator(), whether that Windows has given its last batch.
  void setSource(pass::Shard shard, std::shared_ptr<const bool> exhausted) {
    shard_ = shard;
    source_exhausted_ = std::move(exhausted);
  }

 private:
  anova::Accumulator& on(const at::Device& device);
  // InputError once a batch was refused part-way (NaN, or an error inside the reduction).
  void requireUsable() const;
  anova::AccumulatorOptions options_;
  int64_t seq_len_, dim_, hidden_states_;
  nlohmann::json settings_;
  std::optional<at::Device> device_;
  std::unique_ptr<anova::Accumulator> accumulator_;
  int64_t windows_ = 0;
  int64_t last_window_ = -1;  // the largest window index added
  bool merged_ = false;       // holds another's statistics: no more batches
  pass::Shard shard_;
  std::shared_ptr<const bool> source_exhausted_;
  std::string refused_;  // why a batch was refused part-way; empty: usable
};

// The accumulator of analyze's plan for these settings (its layers, skip_first, second
// moment and sample caps): what posgeom.Windows.accumulator() gives.
PyAccumulator accumulatorFor(const pass::PassPlan& plan, const nlohmann::json& settings, const std::optional<std::string>& device,
                             std::shared_ptr<const bool> exhausted);

}  // namespace posgeom::python
