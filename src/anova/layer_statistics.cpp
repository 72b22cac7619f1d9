#include "posgeom/anova/layer_statistics.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace posgeom::anova {
namespace {

// Rows of a and b (each with its window index) merged by index, the first `cap` kept.
// `rows_per_window` > 1 for stacked whole sequences.
void mergeSamples(Eigen::MatrixXd& a, std::vector<int64_t>& a_windows, std::vector<std::string>* a_labels,
                  const Eigen::MatrixXd& b, const std::vector<int64_t>& b_windows,
                  const std::vector<std::string>* b_labels, int64_t cap, int64_t rows_per_window) {
  struct Item {
    int64_t window;
    bool from_b;
    std::size_t at;
  };
  std::vector<Item> items;
  for (std::size_t i = 0; i < a_windows.size(); ++i) items.push_back({a_windows[i], false, i});
  for (std::size_t i = 0; i < b_windows.size(); ++i) items.push_back({b_windows[i], true, i});
  std::sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.window < y.window; });
  if (static_cast<int64_t>(items.size()) > cap) items.resize(static_cast<std::size_t>(cap));
  const Eigen::Index cols = a.size() ? a.cols() : b.cols();
  Eigen::MatrixXd rows(static_cast<Eigen::Index>(items.size()) * rows_per_window, cols);
  std::vector<int64_t> windows;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& src = items[i].from_b ? b : a;
    rows.middleRows(static_cast<Eigen::Index>(i) * rows_per_window, rows_per_window) =
        src.middleRows(static_cast<Eigen::Index>(items[i].at) * rows_per_window, rows_per_window);
    windows.push_back(items[i].window);
    if (a_labels) labels.push_back((items[i].from_b ? *b_labels : *a_labels)[items[i].at]);
  }
  a = std::move(rows);
  a_windows = std::move(windows);
  if (a_labels) *a_labels = std::move(labels);
}

}  // namespace

void merge(LayerStatistics& into, const LayerStatistics& other, const SampleCaps& caps) {
  if (into.sequences == 0 && into.position_sum.size() == 0) {
    into = other;
    return;
  }
  if (other.layer != into.layer || other.position_sum.rows() != into.position_sum.rows() ||
      other.position_sum.cols() != into.position_sum.cols() || other.hasSecondMoment() != into.hasSecondMoment())
    throw std::invalid_argument("statistics of layer " + std::to_string(other.layer) + " do not match in shape");
  into.sequences += other.sequences;
  into.position_sum += other.position_sum;
  if (into.hasSecondMoment()) into.second_moment += other.second_moment;
  into.context_second_moment += other.context_second_moment;
  if (into.attention_input_sum.size() != other.attention_input_sum.size())
    throw std::invalid_argument("statistics of layer " + std::to_string(other.layer) + " differ in attention inputs");
  if (into.attention_input_sum.size()) into.attention_input_sum += other.attention_input_sum;
  into.norm_sum += other.norm_sum;
  merge(into.magnitudes, other.magnitudes);
  into.previous_cosine_sum += other.previous_cosine_sum;
  // Cosines between layers only where every part measured them (a shard that went
  // layer-major did not): a partial sum would be no one's mean.
  if (into.layer_cosines && other.layer_cosines && into.earlier_cosine_sums.size() == other.earlier_cosine_sums.size()) {
    into.earlier_cosine_sums += other.earlier_cosine_sums;
  } else {
    into.layer_cosines = false;
    into.earlier_cosine_sums.resize(0);
  }
  mergeSamples(into.context_means, into.context_windows, &into.context_labels, other.context_means,
               other.context_windows, &other.context_labels, caps.contexts, 1);
  mergeSamples(into.reservoir, into.reservoir_windows, nullptr, other.reservoir, other.reservoir_windows, nullptr,
               caps.reservoir, into.positions());
  if (into.attention_input_sum.size())
    mergeSamples(into.attention_samples, into.attention_sample_windows, nullptr, other.attention_samples,
                 other.attention_sample_windows, nullptr, caps.attention_samples, into.attention_input_sum.rows());
}

}  // namespace posgeom::anova
