#pragma once
// Reduces each batch of hidden states to the layer statistics where the activations
// are (GPU with --device cuda), in float64, and drops the batch. One of the two places
// Torch is allowed besides the model.
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "posgeom/anova/accumulator_options.h"
#include "posgeom/anova/layer_statistics.h"
#include "posgeom/model/model.h"

namespace posgeom::anova {

// A tensor of at most two dimensions (a vector becomes one column) as a float64 Eigen
// matrix on the host: where statistics and model maps cross from Torch to the Eigen core.
Eigen::MatrixXd toEigen(const at::Tensor& t);

// Counts of bin numbers (0 .. kMagnitudeBins - 1, at most 2^24 of them) added into `counts`.
// bincount on the CPU; on a GPU histc over the bin numbers, a histogram in shared memory:
// bincount sizes its output with a synchronisation, and an index_add would pile its atomics
// onto the few bins most |h| fall in. Both give the same counts (tested on the CPU).
enum class BinCounting { kBincount, kHistc };
void countMagnitudeBins(at::Tensor& counts, const at::Tensor& bins, BinCounting how);

class Accumulator final : public model::LayerObserver {
 public:
  Accumulator(AccumulatorOptions options, int64_t seq_len, int64_t dim, const at::Device& device);
  ~Accumulator() override;

  // What the accumulator knows of the batch it is observing: its windows and labels, its
  // previous hidden state (the cosine between layers) and which hidden states were finite.
  struct BatchState {
    std::vector<int64_t> windows;
    std::vector<std::string> labels;
    at::Tensor ids, window_indices;       // [B, T] token ids (undefined: not known) and [B] windows, on the device
    at::Tensor previous, previous_norms;  // the previous hidden state (positions skipped) and its norms [B, T']
    // With layer_cosines: each accumulated hidden state of this batch so far, as unit vectors
    // [B, T', d] (positions skipped), by hidden-state index.
    std::vector<std::pair<int64_t, at::Tensor>> units;
    std::vector<at::Tensor> finite;       // per hidden state of this batch: all values finite (0-dim bool)
  };

  // Identifies the sequences of the next batch (window index and document label each) and,
  // where known, their token ids [B, T] (where each dimension's largest |h| occurred).
  void beginBatch(std::vector<int64_t> windows, std::vector<std::string> labels, const at::Tensor& ids = {});
  // A layer-major pass observes several batches a layer at a time: it takes each batch's
  // state out after its calls and puts it back before the next ones. Per layer, the batches
  // still arrive in the same order, so the sums are the same numbers.
  BatchState suspendBatch() {
    BatchState taken = std::move(batch_);
    batch_ = BatchState();
    return taken;
  }
  void resumeBatch(BatchState state) { batch_ = std::move(state); }
  void onHidden(int64_t layer, const at::Tensor& hidden) override;
  void onAttentionInput(int64_t block, const at::Tensor& normed) override;
  // After a batch's forward pass: throws InputError naming the first hidden state that held
  // NaN or Inf (one device synchronisation per batch), with `cause` (what made them) after it.
  void checkFinite(const std::string& cause = "") const;
  // The first hidden state of this batch whose norms are not finite (NaN or Inf in it, or
  // values whose squares overflow the batch's reduction), or none.
  std::optional<int64_t> firstNonFinite() const;
  // The first window of this batch.
  int64_t batchStart() const { return batch_.windows.empty() ? int64_t{0} : batch_.windows.front(); }
  // Copies the statistics to the host (at the end, and for each saved state): of every
  // layer not taken (takeLayer).
  std::vector<LayerStatistics> statistics() const;
  // The same, at the end of a pass: each layer's memory is released once it is copied, so
  // the statistics are never held twice. The accumulator is empty afterwards.
  std::vector<LayerStatistics> takeStatistics();
  // Layer-major, one wave: hidden state `layer`'s statistics are final (every batch has
  // passed it), so they are handed over and their memory released. A later batch reaching
  // that layer is a logic error. None where the layer is not accumulated.
  std::optional<LayerStatistics> takeLayer(int64_t layer);
  // Continues from statistics() of an earlier run with the same options: the sums are
  // float64 both ways, so the next batches add to exactly the numbers they would have.
  // Throws InputError naming `where` when layers or shapes differ.
  void restore(const std::vector<LayerStatistics>& saved, const std::string& where);
  // Bytes of every tensor the accumulator holds (on its device, and its host samples): what
  // the memory plan's estimate of the statistics must match.
  int64_t bytes() const;
  // Of those, the bytes on its device (all of them on the CPU).
  int64_t deviceBytes() const;
  // Layer-major on a GPU: the sums of hidden states 0..`layer` are done for this wave, and
  // go to the host until a batch adds to them again (the next wave), so that the device
  // holds one layer's statistics, not every layer's. Nothing to do on the CPU.
  void parkThrough(int64_t layer);

 private:
  struct Layer;
  LayerStatistics statisticsOf(const Layer& layer) const;
  // A saved layer's magnitude statistics back on the device; InputError naming `where`
  // when it has none or they do not fit.
  static void restoreMagnitudes(Layer& layer, const MagnitudeStatistics& saved, const std::string& where);
  // Every position's |h| of this batch into the layer's magnitude statistics.
  void addMagnitudes(Layer& layer, const at::Tensor& hidden, const at::Tensor& all_norms, at::ScalarType reduced) const;
  // The layer's tensors, zero, on the accumulator's device (at the start, or at first use).
  void allocate(Layer& layer) const;
  // Where a layer's sums are: the accumulator's device, or the host while parked.
  static void place(Layer& layer, const at::Device& where);
  Layer* active(int64_t layer_index);  // the layer (on the device), or null where not accumulated
  AccumulatorOptions options_;
  int64_t positions_;
  int64_t seq_len_, dim_;
  at::Device device_;
  std::vector<std::unique_ptr<Layer>> layers_;  // parallel to options_.layers
  BatchState batch_;
};

}  // namespace posgeom::anova
