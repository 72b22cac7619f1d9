#include "posgeom/anova/accumulator.h"

#include <algorithm>
#include <cstring>

#include "posgeom/anova/gram_sum.h"
#include "posgeom/base/error.h"

namespace posgeom::anova {

Eigen::MatrixXd toEigen(const at::Tensor& t) {
  const auto host = t.to(at::kCPU, at::kDouble).contiguous();
  const auto rows = host.dim() >= 1 ? host.size(0) : 1;
  const auto cols = host.dim() == 2 ? host.size(1) : 1;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> m(rows, cols);
  if (m.size()) std::memcpy(m.data(), host.data_ptr<double>(), static_cast<size_t>(m.size()) * sizeof(double));
  return m;
}

namespace {

// The first `rows` rows of `into` (on its device, in its dtype) become `m`'s rows.
void copyRows(at::Tensor into, const Eigen::MatrixXd& m) {
  if (m.size() == 0) return;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = m;
  const auto host = at::from_blob(row_major.data(), {m.rows(), m.cols()}, at::TensorOptions().dtype(at::kDouble));
  into.view({-1, m.cols()}).narrow(0, 0, m.rows()).copy_(host);
}

std::vector<int64_t> toVector(const at::Tensor& t) {
  const auto host = t.to(at::kCPU, at::kLong).contiguous();
  return {host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel()};
}

template <typename T>
void copyVector(at::Tensor into, const std::vector<T>& v) {
  auto host = at::tensor(v, at::TensorOptions().dtype(c10::CppTypeToScalarType<T>::value));
  into.copy_(host.to(into.scalar_type()));
}

}  // namespace

struct Accumulator::Layer {
  int64_t index = 0;
  int64_t sequences = 0;
  at::Tensor position_sum, context_second_moment, norm_sum, cosine_sum;
  at::Tensor earlier_cosine_sum;  // [index] with layer_cosines
  std::unique_ptr<GramSum> second_moment;
  at::Tensor context_means;  // [cap, d], filled up to contexts_kept rows
  int64_t contexts_kept = 0;
  std::vector<int64_t> context_windows;
  std::vector<std::string> context_labels;
  at::Tensor attention_input_sum;  // [T, d], for the block producing this layer
  at::Tensor attention_samples;    // [cap, T, d], float32 on the host
  int64_t attention_samples_kept = 0;
  std::vector<int64_t> attention_sample_windows;
  at::Tensor reservoir;  // [cap, T', d]
  int64_t reservoir_kept = 0;
  std::vector<int64_t> reservoir_windows;
  // Over every position (MagnitudeStatistics): each dimension's first largest |h| and
  // where it was, the |h| histogram, the skipped positions' sums, the squares.
  at::Tensor position_abs_max, max_window, max_position, max_token, magnitude_counts, skipped_position_sum,
      position_square_sum, context_square_sum, context_square_sum_from_1;
  bool parked = false;  // its sums on the host (layer-major on a GPU, between its blocks)
  bool allocated = false;
  bool taken = false;  // handed over by takeLayer: no batch may reach it again

  // The tensors on the accumulator's device besides the second moment (the attention
  // samples are on the host always).
  template <typename Self, typename Visit>
  static void forEachDeviceTensor(Self& self, Visit visit) {
    for (auto* t : {&self.position_sum, &self.context_second_moment, &self.norm_sum, &self.cosine_sum, &self.earlier_cosine_sum, &self.context_means,
                    &self.reservoir, &self.attention_input_sum, &self.position_abs_max, &self.max_window, &self.max_position,
                    &self.max_token, &self.magnitude_counts, &self.skipped_position_sum, &self.position_square_sum,
                    &self.context_square_sum, &self.context_square_sum_from_1})
      visit(*t);
  }
  int64_t deviceBytes() const {
    int64_t total = second_moment ? second_moment->bytes() : 0;
    forEachDeviceTensor(*this, [&](const at::Tensor& t) { total += heldBytes(t); });
    return total;
  }
};

Accumulator::Accumulator(AccumulatorOptions options, int64_t seq_len, int64_t dim, const at::Device& device)
    : options_(std::move(options)), positions_(seq_len - options_.skip_first), seq_len_(seq_len), dim_(dim), device_(device) {
  for (int64_t l : options_.layers) {
    auto layer = std::make_unique<Layer>();
    layer->index = l;
    if (!options_.allocate_on_first_use) allocate(*layer);
    layers_.push_back(std::move(layer));
  }
}

void Accumulator::allocate(Layer& layer) const {
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device_);
  const auto rows = [&](int64_t cap) { return sampleRows(cap, options_.windows_expected); };
  layer.position_sum = at::zeros({positions_, dim_}, f64);
  if (options_.second_moment) layer.second_moment = std::make_unique<GramSum>(dim_, device_);
  layer.context_second_moment = at::zeros({dim_, dim_}, f64);
  layer.norm_sum = at::zeros({}, f64);
  layer.cosine_sum = at::zeros({}, f64);
  if (options_.layer_cosines) layer.earlier_cosine_sum = at::zeros({layer.index}, f64);
  layer.context_means = at::zeros({rows(options_.caps.contexts), dim_}, f64);
  layer.reservoir = at::zeros({rows(options_.caps.reservoir), positions_, dim_}, f64);
  const auto i64 = f64.dtype(at::kLong);
  layer.position_abs_max = at::zeros({seq_len_, dim_}, f64);
  layer.max_window = at::full({dim_}, -1, i64);
  layer.max_position = at::full({dim_}, -1, i64);
  layer.max_token = at::full({dim_}, -1, i64);
  layer.magnitude_counts = at::zeros({kMagnitudeBins}, f64);
  layer.skipped_position_sum = at::zeros({options_.skip_first, dim_}, f64);
  layer.position_square_sum = at::zeros({seq_len_}, f64);
  layer.context_square_sum = at::zeros({}, f64);
  layer.context_square_sum_from_1 = at::zeros({}, f64);
  if (options_.attention_inputs && layer.index >= 1) {
    layer.attention_input_sum = at::zeros({seq_len_, dim_}, f64);
    layer.attention_samples = at::zeros({rows(options_.caps.attention_samples), seq_len_, dim_}, at::kFloat);
  }
  layer.allocated = true;
  layer.parked = false;
}

Accumulator::~Accumulator() = default;

void Accumulator::beginBatch(std::vector<int64_t> windows, std::vector<std::string> labels, const at::Tensor& ids) {
  batch_ = BatchState();  // not a braced aggregate: GCC 12 with LibTorch 2.11 warns on one of tensors
  batch_.windows = std::move(windows);
  batch_.labels = std::move(labels);
  if (ids.defined()) batch_.ids = ids.to(device_, at::kLong);
  batch_.window_indices = at::tensor(batch_.windows, at::TensorOptions().dtype(at::kLong)).to(device_);
}

std::optional<int64_t> Accumulator::firstNonFinite() const {
  if (batch_.finite.empty()) return std::nullopt;
  const auto flags = at::stack(batch_.finite).to(at::kCPU);
  if (flags.all().item<bool>()) return std::nullopt;
  int64_t first = 0;
  while (flags[first].item<bool>()) ++first;
  return first;
}

void Accumulator::checkFinite(const std::string& cause) const {
  const auto first = firstNonFinite();
  if (!first) return;
  throw InputError("hidden." + std::to_string(*first),
                   "NaN or Inf in the activations (first at this hidden state, in the batch from window " + std::to_string(batchStart()) +
                       ")" + (cause.empty() ? "" : "; " + cause));
}

namespace {

// A batch's reductions run in the activations' precision, at least float32, and only the
// running sums are float64: ATen sums floats pairwise, so a batch's sums keep float32's
// precision, and reducing into float64 directly takes ATen's mixed-dtype path, 3 to 9 times
// slower on the CPU and a float64 copy of every activation on CUDA (issue 34).
at::ScalarType batchReductionType(const at::Tensor& t) { return t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat; }

}  // namespace

void Accumulator::onHidden(int64_t layer_index, const at::Tensor& hidden) {
  // Non-finite values show in the norms, which square them.
  const auto reduced = batchReductionType(hidden);
  const auto all_norms = at::linalg_vector_norm(hidden, 2, at::IntArrayRef{2}, false, reduced).to(at::kDouble);  // [B, T]
  batch_.finite.push_back(at::isfinite(all_norms).all());
  const auto h = hidden.narrow(1, options_.skip_first, positions_);  // [B, T', d]
  const auto norms = all_norms.narrow(1, options_.skip_first, positions_);
  const auto previous = std::exchange(batch_.previous, h);
  const auto previous_norms = std::exchange(batch_.previous_norms, norms);
  Layer* layer = active(layer_index);
  if (!layer) return;

  const int64_t batch = h.size(0);
  addMagnitudes(*layer, hidden, all_norms, reduced);
  layer->sequences += batch;
  layer->position_sum.add_(at::sum(h, {0}, false, reduced));
  if (layer->second_moment) layer->second_moment->addBatch(h);
  const auto means = at::mean(h, {1}, false, reduced).to(at::kDouble);  // [B, d]
  layer->context_second_moment.addmm_(means.t(), means);
  layer->norm_sum.add_(norms.sum());
  if (previous.defined()) {
    // Products in float32 at least: a bfloat16 product keeps 8 bits.
    const auto dots = at::sum(h.to(reduced) * previous.to(reduced), {2}).to(at::kDouble);  // [B, T']
    layer->cosine_sum.add_((dots / (norms * previous_norms).clamp_min(1e-300)).sum());
  }
  if (layer->earlier_cosine_sum.defined()) {
    // Unit vectors in the batch's reduction type: a product of float32 units is what the
    // previous layer's cosine takes too. The clamp after the conversion (1e-300 is 0 in
    // float32): a zero vector's unit is zero, its cosines 0, as the previous layer's.
    const auto unit = h.to(reduced) / norms.to(reduced).clamp_min(1e-30).unsqueeze(2);
    for (const auto& [earlier, units] : batch_.units)
      layer->earlier_cosine_sum[earlier].add_((unit * units).sum().to(at::kDouble));
    // The last analysed layer ends what the batch holds of them.
    if (layer_index == *options_.layers.rbegin())
      batch_.units.clear();
    else
      batch_.units.emplace_back(layer_index, unit);
  }
  // Samples: windows arrive in increasing index order per shard, so the first ones kept
  // are the lowest-indexed.
  for (int64_t b = 0; b < batch; ++b) {
    if (layer->contexts_kept < layer->context_means.size(0)) {
      layer->context_means[layer->contexts_kept++].copy_(means[b]);
      layer->context_windows.push_back(batch_.windows.at(static_cast<size_t>(b)));
      layer->context_labels.push_back(batch_.labels.at(static_cast<size_t>(b)));
    }
    if (layer->reservoir_kept < layer->reservoir.size(0)) {
      layer->reservoir[layer->reservoir_kept++].copy_(h[b]);
      layer->reservoir_windows.push_back(batch_.windows.at(static_cast<size_t>(b)));
    }
  }
}

void countMagnitudeBins(at::Tensor& counts, const at::Tensor& bins, BinCounting how) {
  if (how == BinCounting::kBincount) {
    counts.add_(at::bincount(bins.reshape({-1}).to(at::kLong), {}, kMagnitudeBins).narrow(0, 0, kMagnitudeBins));
    return;
  }
  // Bin numbers are whole and below 2^24: exact in float32, each its own bin of [0, 4096).
  counts.add_(at::histc(bins.reshape({-1}).to(at::kFloat), kMagnitudeBins, 0, static_cast<double>(kMagnitudeBins)).to(counts.scalar_type()));
}

void Accumulator::addMagnitudes(Layer& l, const at::Tensor& hidden, const at::Tensor& all_norms, at::ScalarType reduced) const {
  const int64_t b = hidden.size(0), t = hidden.size(1);
  const auto magnitude = hidden.abs().to(reduced).reshape({b * t, dim_});  // rows: window after window, position after position
  // torch's max returns the first of equal maxima (its documented contract): the lowest
  // window, then position, as merge() keeps. The first batch sets every dimension.
  const auto [largest, flat] = at::max(magnitude, 0);
  const auto taken = l.sequences == 0 ? at::ones_like(largest, at::kBool) : largest.to(at::kDouble) > at::amax(l.position_abs_max, {0});
  l.max_window = at::where(taken, batch_.window_indices.index_select(0, at::div(flat, t, "floor")), l.max_window);
  l.max_position = at::where(taken, at::remainder(flat, t), l.max_position);
  if (batch_.ids.defined()) l.max_token = at::where(taken, batch_.ids.reshape({-1}).index_select(0, flat), l.max_token);
  else l.max_token.masked_fill_(taken, -1);
  l.position_abs_max = at::maximum(l.position_abs_max, at::amax(magnitude.view({b, t, dim_}), {0}).to(at::kDouble));
  // |h| binned by its float32 bits (exponent and 4 mantissa bits: MagnitudeStatistics),
  // 2^24 at a time so that the bins' copies stay bounded and histc's float32 counts exact.
  const auto flat_magnitude = magnitude.to(at::kFloat).reshape({-1});
  constexpr int64_t kChunk = int64_t{1} << 24;
  for (int64_t start = 0; start < flat_magnitude.numel(); start += kChunk) {
    const auto part = flat_magnitude.narrow(0, start, std::min(kChunk, flat_magnitude.numel() - start));
    // The mask: a NaN may keep its sign through abs (LibTorch 1.13's vectorised bfloat16 abs
    // does), and a negative index would throw before the batch's own check names the NaN.
    const auto bins = at::__rshift__(part.view(at::kInt), 23 - kMagnitudeMantissaBits).bitwise_and_(kMagnitudeBins - 1);
    countMagnitudeBins(l.magnitude_counts, bins, device_.is_cpu() ? BinCounting::kBincount : BinCounting::kHistc);
  }
  // The ANOVA over every position, position 0 in and out (metrics::massiveActivations).
  if (options_.skip_first > 0)
    l.skipped_position_sum.add_(at::sum(hidden.narrow(1, 0, options_.skip_first), {0}, false, reduced));
  l.position_square_sum.add_(all_norms.pow(2).sum(0));
  const auto sums = at::sum(hidden, {1}, false, reduced).to(at::kDouble);  // [B, d]
  l.context_square_sum.add_((sums / static_cast<double>(t)).pow(2).sum());
  if (t > 1) l.context_square_sum_from_1.add_(((sums - hidden.select(1, 0).to(at::kDouble)) / static_cast<double>(t - 1)).pow(2).sum());
}

void Accumulator::onAttentionInput(int64_t block, const at::Tensor& normed) {
  if (!options_.attention_inputs) return;
  Layer* l = active(block + 1);
  if (!l || !l->attention_input_sum.defined()) return;
  l->attention_input_sum.add_(at::sum(normed, {0}, false, batchReductionType(normed)));
  const int64_t take = std::min(normed.size(0), l->attention_samples.size(0) - l->attention_samples_kept);
  if (take <= 0) return;
  l->attention_samples.narrow(0, l->attention_samples_kept, take).copy_(normed.narrow(0, 0, take).to(at::kCPU, at::kFloat));
  l->attention_samples_kept += take;
  for (int64_t b = 0; b < take; ++b) l->attention_sample_windows.push_back(batch_.windows.at(static_cast<size_t>(b)));
}

Accumulator::Layer* Accumulator::active(int64_t layer_index) {
  for (auto& l : layers_)
    if (l->index == layer_index) {
      if (l->taken) throw std::logic_error("accumulator: hidden state " + std::to_string(layer_index) + " was observed after it was taken");
      if (!l->allocated) allocate(*l);
      if (l->parked) place(*l, device_);
      return l.get();
    }
  return nullptr;
}

void Accumulator::place(Layer& l, const at::Device& where) {
  Layer::forEachDeviceTensor(l, [&](at::Tensor& t) {
    if (t.defined()) t = t.to(where);
  });
  if (l.second_moment) l.second_moment->moveTo(where);
  l.parked = where.is_cpu();
}

void Accumulator::parkThrough(int64_t layer) {
  if (device_.is_cpu()) return;
  for (auto& l : layers_)
    if (l->index <= layer && l->allocated && !l->parked) place(*l, at::kCPU);
}

int64_t Accumulator::deviceBytes() const {
  if (device_.is_cpu()) return bytes();
  int64_t total = 0;
  for (const auto& l : layers_)
    if (!l->parked) total += l->deviceBytes();
  return total;
}

int64_t Accumulator::bytes() const {
  int64_t total = 0;
  for (const auto& l : layers_) total += l->deviceBytes() + heldBytes(l->attention_samples);
  return total;
}

void Accumulator::restore(const std::vector<LayerStatistics>& saved, const std::string& where) {
  if (saved.size() != layers_.size()) throw InputError(where, "holds other layers than this run selects");
  for (std::size_t i = 0; i < saved.size(); ++i) {
    const auto& s = saved[i];
    auto& l = *layers_[i];
    if (!l.allocated) allocate(l);
    const bool heads = l.attention_input_sum.defined();
    if (s.layer != l.index || s.positions() != l.position_sum.size(0) || s.dim() != l.position_sum.size(1) ||
        s.hasSecondMoment() != (l.second_moment != nullptr) || heads != (s.attention_input_sum.size() > 0) ||
        s.context_means.rows() > l.context_means.size(0) ||
        static_cast<int64_t>(s.reservoir_windows.size()) > l.reservoir.size(0) ||
        (heads && static_cast<int64_t>(s.attention_sample_windows.size()) > l.attention_samples.size(0)))
      throw InputError(where, "layer " + std::to_string(s.layer) + " does not fit this run's statistics");
    l.sequences = s.sequences;
    copyRows(l.position_sum, s.position_sum);
    if (s.hasSecondMoment()) {
      auto full = at::empty({s.dim(), s.dim()}, l.position_sum.options());
      copyRows(full, s.second_moment);
      l.second_moment->set(full);
    }
    copyRows(l.context_second_moment, s.context_second_moment);
    l.norm_sum.fill_(s.norm_sum);
    l.cosine_sum.fill_(s.previous_cosine_sum);
    // Cosines between layers go on only where the state has them and this run measures them
    // (a run that went layer-major, or a state without them, leaves them out from here on).
    if (!s.layer_cosines) l.earlier_cosine_sum = at::Tensor();
    if (l.earlier_cosine_sum.defined()) {
      if (s.earlier_cosine_sums.size() != l.earlier_cosine_sum.size(0))
        throw InputError(where, "layer " + std::to_string(s.layer) + " does not fit this run's statistics");
      copyRows(l.earlier_cosine_sum, s.earlier_cosine_sums);
    }
    copyRows(l.context_means, s.context_means);
    l.contexts_kept = s.context_means.rows();
    l.context_windows = s.context_windows;
    l.context_labels = s.context_labels;
    copyRows(l.reservoir, s.reservoir);
    l.reservoir_kept = static_cast<int64_t>(s.reservoir_windows.size());
    l.reservoir_windows = s.reservoir_windows;
    restoreMagnitudes(l, s.magnitudes, where);
    if (heads) {
      copyRows(l.attention_input_sum, s.attention_input_sum);
      copyRows(l.attention_samples, s.attention_samples);  // float32 values held in float64: exact
      l.attention_samples_kept = static_cast<int64_t>(s.attention_sample_windows.size());
      l.attention_sample_windows = s.attention_sample_windows;
    }
  }
}

void Accumulator::restoreMagnitudes(Layer& l, const MagnitudeStatistics& m, const std::string& where) {
  if (m.empty())
    throw InputError(where, "layer " + std::to_string(l.index) +
                                " has no massive-activation statistics (a state of an earlier posgeom): run it again without --resume");
  if (m.seqLen() != l.position_abs_max.size(0) || m.dim() != l.position_abs_max.size(1) ||
      m.skipped_position_sum.rows() != l.skipped_position_sum.size(0) || static_cast<int64_t>(m.counts.size()) != kMagnitudeBins)
    throw InputError(where, "layer " + std::to_string(l.index) + " does not fit this run's statistics");
  copyRows(l.position_abs_max, m.position_abs_max);
  copyVector(l.max_window, m.max_window);
  copyVector(l.max_position, m.max_position);
  copyVector(l.max_token, m.max_token);
  copyVector(l.magnitude_counts, m.counts);
  copyRows(l.skipped_position_sum, m.skipped_position_sum);
  copyRows(l.position_square_sum, m.position_square_sum);
  l.context_square_sum.fill_(m.context_square_sum);
  l.context_square_sum_from_1.fill_(m.context_square_sum_from_1);
}

LayerStatistics Accumulator::statisticsOf(const Layer& layer) const {
  const auto* l = &layer;
  // A layer no batch has reached yet (allocated on first use): its statistics are zeros.
  Layer zeros;
  if (!layer.allocated) {
    zeros.index = layer.index;
    allocate(zeros);
    l = &zeros;
  }
  LayerStatistics s;
  s.layer = l->index;
  s.sequences = l->sequences;
  s.position_sum = toEigen(l->position_sum);
  if (l->second_moment) s.second_moment = toEigen(l->second_moment->sum());
  s.context_second_moment = toEigen(l->context_second_moment);
  s.norm_sum = l->norm_sum.item<double>();
  s.previous_cosine_sum = l->cosine_sum.item<double>();
  if (l->earlier_cosine_sum.defined()) {
    s.layer_cosines = true;
    s.earlier_cosine_sums = toEigen(l->earlier_cosine_sum).col(0);
  }
  s.context_means = toEigen(l->context_means.narrow(0, 0, l->contexts_kept));
  s.context_windows = l->context_windows;
  s.context_labels = l->context_labels;
  s.reservoir = toEigen(l->reservoir.narrow(0, 0, l->reservoir_kept).reshape({-1, l->position_sum.size(1)}));
  s.reservoir_windows = l->reservoir_windows;
  auto& m = s.magnitudes;
  m.position_abs_max = toEigen(l->position_abs_max);
  m.max_window = toVector(l->max_window);
  m.max_position = toVector(l->max_position);
  m.max_token = toVector(l->max_token);
  const auto counts = l->magnitude_counts.to(at::kCPU).contiguous();
  m.counts.assign(counts.data_ptr<double>(), counts.data_ptr<double>() + counts.numel());
  m.skipped_position_sum = toEigen(l->skipped_position_sum);
  if (m.skipped_position_sum.size() == 0) m.skipped_position_sum.resize(0, l->position_sum.size(1));
  m.position_square_sum = toEigen(l->position_square_sum);
  m.context_square_sum = l->context_square_sum.item<double>();
  m.context_square_sum_from_1 = l->context_square_sum_from_1.item<double>();
  if (l->attention_input_sum.defined()) {
    s.attention_input_sum = toEigen(l->attention_input_sum);
    s.attention_samples = toEigen(l->attention_samples.narrow(0, 0, l->attention_samples_kept).reshape({-1, l->attention_input_sum.size(1)}));
    s.attention_sample_windows = l->attention_sample_windows;
  }
  return s;
}

std::vector<LayerStatistics> Accumulator::statistics() const {
  std::vector<LayerStatistics> out;
  for (const auto& l : layers_)
    if (!l->taken) out.push_back(statisticsOf(*l));
  return out;
}

std::optional<LayerStatistics> Accumulator::takeLayer(int64_t layer_index) {
  for (auto& l : layers_) {
    if (l->index != layer_index || l->taken) continue;
    auto s = statisticsOf(*l);
    const int64_t index = l->index;
    l = std::make_unique<Layer>();  // its tensors released
    l->index = index;
    l->taken = true;
    return s;
  }
  return std::nullopt;
}

std::vector<LayerStatistics> Accumulator::takeStatistics() {
  std::vector<LayerStatistics> out;
  for (auto& l : layers_) {
    if (!l->taken) out.push_back(statisticsOf(*l));
    l.reset();  // its memory is free for the next layer's copy
  }
  layers_.clear();
  return out;
}

}  // namespace posgeom::anova
