#include "posgeom/pass/rank_reduce.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace posgeom::pass {
namespace {

using nlohmann::json;

json shapeOf(const Eigen::MatrixXd& m) { return json::array({m.rows(), m.cols()}); }

// What the others need of this rank's layer: shapes, and the windows (and labels) of its
// bounded samples.
json describe(const anova::LayerStatistics& l) {
  return {{"layer", l.layer},
          {"position_sum", shapeOf(l.position_sum)},
          {"second_moment", shapeOf(l.second_moment)},
          {"context_second_moment", shapeOf(l.context_second_moment)},
          {"attention_input_sum", shapeOf(l.attention_input_sum)},
          {"context_windows", l.context_windows},
          {"context_labels", l.context_labels},
          {"reservoir_windows", l.reservoir_windows},
          {"attention_sample_windows", l.attention_sample_windows},
          {"layer_cosines", l.layer_cosines},
          {"magnitudes", l.magnitudes.empty() ? json::array({0, 0, 0})
                                              : json::array({l.magnitudes.seqLen(), l.magnitudes.skipped_position_sum.rows(),
                                                             l.magnitudes.dim()})}};
}

// The shape a field has on the ranks that have it ([0, 0] where none has).
std::pair<Eigen::Index, Eigen::Index> agreedShape(const std::vector<json>& layers, const char* field) {
  std::pair<Eigen::Index, Eigen::Index> shape{0, 0};
  for (const auto& l : layers) {
    const auto rows = l[field][0].get<Eigen::Index>(), cols = l[field][1].get<Eigen::Index>();
    if (rows * cols == 0) continue;
    if (shape.first * shape.second != 0 && shape != std::make_pair(rows, cols))
      throw std::logic_error(std::string("ranks hold ") + field + " of different shapes for layer " + l["layer"].dump());
    shape = {rows, cols};
  }
  return shape;
}

void sumField(Eigen::MatrixXd& m, const std::vector<json>& layers, const char* field, runtime::RankGroup& group) {
  const auto [rows, cols] = agreedShape(layers, field);
  if (rows * cols == 0) return;
  if (m.size() == 0) m = Eigen::MatrixXd::Zero(rows, cols);
  group.sumToRoot(m.data(), m.size());
}

// Bounded samples: the lowest `cap` windows over all ranks (windows are disjoint between
// ranks), each rank's rows placed in their final slots of a matrix of zeros, summed.
void mergeSamples(Eigen::MatrixXd& rows, std::vector<int64_t>& windows, std::vector<std::string>* labels,
                  const std::vector<json>& layers, const char* windows_field, const char* labels_field, int64_t cap,
                  Eigen::Index rows_per_window, Eigen::Index cols, runtime::RankGroup& group) {
  struct Item {
    int64_t window;
    std::size_t rank;
    std::size_t at;
  };
  std::vector<Item> items;
  for (std::size_t r = 0; r < layers.size(); ++r) {
    const auto w = layers[r][windows_field].get<std::vector<int64_t>>();
    for (std::size_t i = 0; i < w.size(); ++i) items.push_back({w[i], r, i});
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.window < b.window; });
  if (static_cast<int64_t>(items.size()) > cap) items.resize(static_cast<std::size_t>(cap));
  if (items.empty() || cols == 0) return;
  Eigen::MatrixXd merged = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(items.size()) * rows_per_window, cols);
  std::vector<int64_t> merged_windows;
  std::vector<std::string> merged_labels;
  const auto me = static_cast<std::size_t>(group.rank());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    if (item.rank == me)
      merged.middleRows(static_cast<Eigen::Index>(i) * rows_per_window, rows_per_window) =
          rows.middleRows(static_cast<Eigen::Index>(item.at) * rows_per_window, rows_per_window);
    merged_windows.push_back(item.window);
    if (labels) merged_labels.push_back(layers[item.rank][labels_field][item.at].get<std::string>());
  }
  group.sumToRoot(merged.data(), merged.size());
  rows = std::move(merged);
  windows = std::move(merged_windows);
  if (labels) *labels = std::move(merged_labels);
}

// Maxima do not sum: the largest |h| by position and dimension is reduced by max; each
// dimension's largest with where it was (value, window, position, token: 4 x d numbers,
// exact below 2^53) goes to rank 0 in a slot of its own (a buffer of zeros, summed), where
// the ranks' are merged as anova::merge merges states; the rest sums. None on rank 0 where
// the ranks have none.
void reduceMagnitudes(anova::MagnitudeStatistics& m, const std::vector<json>& layers, runtime::RankGroup& group) {
  const auto shape = layers.front()["magnitudes"];
  for (const auto& l : layers)
    if (l["magnitudes"] != shape) throw std::logic_error("ranks hold magnitude statistics of different shapes");
  if (shape[0].get<int64_t>() == 0) {
    m = anova::MagnitudeStatistics();
    return;
  }
  const Eigen::Index d = m.dim();
  const Eigen::VectorXd largest = m.absMax();
  Eigen::MatrixXd where = Eigen::MatrixXd::Zero(4 * d, group.world());  // a column per rank
  for (Eigen::Index i = 0; i < d; ++i) {
    const auto at = static_cast<std::size_t>(i);
    where.col(group.rank()).segment(4 * i, 4) << largest[i], static_cast<double>(m.max_window[at]),
        static_cast<double>(m.max_position[at]), static_cast<double>(m.max_token[at]);
  }
  group.sumToRoot(where.data(), where.size());
  group.maxToRoot(m.position_abs_max.data(), m.position_abs_max.size());
  Eigen::VectorXd sums(static_cast<Eigen::Index>(m.counts.size()) + m.skipped_position_sum.size() + m.position_square_sum.size() + 2);
  auto skipped = Eigen::Map<Eigen::VectorXd>(m.skipped_position_sum.data(), m.skipped_position_sum.size());
  sums << Eigen::Map<const Eigen::VectorXd>(m.counts.data(), static_cast<Eigen::Index>(m.counts.size())), skipped,
      m.position_square_sum, m.context_square_sum, m.context_square_sum_from_1;
  group.sumToRoot(sums.data(), sums.size());
  if (!group.root()) return;
  Eigen::Index k = 0;
  for (auto& c : m.counts) c = sums[k++];
  skipped = sums.segment(k, m.skipped_position_sum.size());
  k += m.skipped_position_sum.size();
  m.position_square_sum = sums.segment(k, m.position_square_sum.size());
  k += m.position_square_sum.size();
  m.context_square_sum = sums[k];
  m.context_square_sum_from_1 = sums[k + 1];
  // Each dimension's: the largest over the ranks, of equal ones the lowest window then
  // position; a rank that saw no window (-1) never.
  for (Eigen::Index i = 0; i < d; ++i) {
    Eigen::Index best = -1;
    for (Eigen::Index r = 0; r < where.cols(); ++r) {
      const auto rec = where.col(r).segment(4 * i, 4);
      if (rec[1] < 0) continue;
      if (best < 0) {
        best = r;
        continue;
      }
      const auto b = where.col(best).segment(4 * i, 4);
      if (rec[0] > b[0] || (rec[0] == b[0] && std::make_pair(rec[1], rec[2]) < std::make_pair(b[1], b[2]))) best = r;
    }
    if (best < 0) continue;
    const auto at = static_cast<std::size_t>(i);
    m.max_window[at] = static_cast<int64_t>(where(4 * i + 1, best));
    m.max_position[at] = static_cast<int64_t>(where(4 * i + 2, best));
    m.max_token[at] = static_cast<int64_t>(where(4 * i + 3, best));
  }
}

}  // namespace

std::vector<anova::LayerStatistics> reduceToRoot(std::vector<anova::LayerStatistics> layers, runtime::RankGroup& group,
                                                 const anova::SampleCaps& caps) {
  json mine = json::array();
  for (const auto& l : layers) mine.push_back(describe(l));
  std::vector<json> ranks;
  for (const auto& text : group.gatherAll(mine.dump())) ranks.push_back(json::parse(text));
  for (const auto& r : ranks)
    if (r.size() != layers.size()) throw std::logic_error("ranks hold statistics of different layers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    auto& l = layers[i];
    std::vector<json> of_layer;
    for (const auto& r : ranks) {
      if (r[i]["layer"].get<int64_t>() != l.layer) throw std::logic_error("ranks hold statistics of different layers");
      of_layer.push_back(r[i]);
    }
    Eigen::Vector3d scalars(static_cast<double>(l.sequences), l.norm_sum, l.previous_cosine_sum);
    group.sumToRoot(scalars.data(), scalars.size());
    l.sequences = static_cast<int64_t>(scalars[0]);
    l.norm_sum = scalars[1];
    l.previous_cosine_sum = scalars[2];
    // Cosines between layers where every rank measured them (each plans its own memory, and
    // one that went layer-major did not): else none, a partial sum being no one's mean. Every
    // rank reads the same descriptions, so all take the same branch.
    bool every_rank = true;
    for (const auto& r : of_layer) every_rank = every_rank && r.value("layer_cosines", false);
    if (every_rank && l.layer_cosines) {
      if (l.earlier_cosine_sums.size() > 0) group.sumToRoot(l.earlier_cosine_sums.data(), l.earlier_cosine_sums.size());
    } else {
      l.layer_cosines = false;
      l.earlier_cosine_sums.resize(0);
    }
    sumField(l.position_sum, of_layer, "position_sum", group);
    sumField(l.second_moment, of_layer, "second_moment", group);
    sumField(l.context_second_moment, of_layer, "context_second_moment", group);
    sumField(l.attention_input_sum, of_layer, "attention_input_sum", group);
    reduceMagnitudes(l.magnitudes, of_layer, group);
    const Eigen::Index d = l.position_sum.cols();
    mergeSamples(l.context_means, l.context_windows, &l.context_labels, of_layer, "context_windows", "context_labels",
                 caps.contexts, 1, d, group);
    mergeSamples(l.reservoir, l.reservoir_windows, nullptr, of_layer, "reservoir_windows", nullptr, caps.reservoir,
                 l.position_sum.rows(), d, group);
    mergeSamples(l.attention_samples, l.attention_sample_windows, nullptr, of_layer, "attention_sample_windows", nullptr,
                 caps.attention_samples, l.attention_input_sum.rows(), d, group);
  }
  if (!group.root()) return {};
  return layers;
}

namespace {

// Rank 0's matrix on every rank, in the shape rank 0 described.
Eigen::MatrixXd broadcastMatrix(const Eigen::MatrixXd& on_root, const json& shape, runtime::RankGroup& group) {
  Eigen::MatrixXd m = group.root() ? on_root : Eigen::MatrixXd::Zero(shape[0].get<Eigen::Index>(), shape[1].get<Eigen::Index>());
  group.broadcastFromRoot(m.data(), m.size());
  return m;
}

// The rows of the windows this rank owns.
void keepOwn(Eigen::MatrixXd& rows, std::vector<int64_t>& windows, std::vector<std::string>* labels, Eigen::Index rows_per_window,
             const std::function<bool(int64_t)>& own) {
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < windows.size(); ++i)
    if (own(windows[i])) kept.push_back(i);
  Eigen::MatrixXd out(static_cast<Eigen::Index>(kept.size()) * rows_per_window, rows.cols());
  std::vector<int64_t> kept_windows;
  std::vector<std::string> kept_labels;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    out.middleRows(static_cast<Eigen::Index>(k) * rows_per_window, rows_per_window) =
        rows.middleRows(static_cast<Eigen::Index>(kept[k]) * rows_per_window, rows_per_window);
    kept_windows.push_back(windows[kept[k]]);
    if (labels) kept_labels.push_back((*labels)[kept[k]]);
  }
  rows = std::move(out);
  windows = std::move(kept_windows);
  if (labels) *labels = std::move(kept_labels);
}

Eigen::MatrixXd zerosShaped(const json& shape) {
  return Eigen::MatrixXd::Zero(shape[0].get<Eigen::Index>(), shape[1].get<Eigen::Index>());
}

}  // namespace

std::vector<anova::LayerStatistics> resumeShare(const std::vector<anova::LayerStatistics>& saved, runtime::RankGroup& group,
                                                const std::function<bool(int64_t)>& own) {
  json described = json::array();
  if (group.root())
    for (const auto& l : saved) {
      described.push_back(describe(l));
      described.back()["context_means"] = shapeOf(l.context_means);
      described.back()["reservoir"] = shapeOf(l.reservoir);
      described.back()["attention_samples"] = shapeOf(l.attention_samples);
    }
  described = json::parse(group.broadcastFromRoot(described.dump()));
  std::vector<anova::LayerStatistics> share;
  for (std::size_t i = 0; i < described.size(); ++i) {
    const auto& d = described[i];
    anova::LayerStatistics l;
    if (group.root()) {
      l = saved[i];
    } else {
      l.layer = d["layer"].get<int64_t>();
      l.position_sum = zerosShaped(d["position_sum"]);
      l.second_moment = zerosShaped(d["second_moment"]);
      l.context_second_moment = zerosShaped(d["context_second_moment"]);
      l.attention_input_sum = zerosShaped(d["attention_input_sum"]);
      l.context_windows = d["context_windows"].get<std::vector<int64_t>>();
      l.context_labels = d["context_labels"].get<std::vector<std::string>>();
      l.reservoir_windows = d["reservoir_windows"].get<std::vector<int64_t>>();
      l.attention_sample_windows = d["attention_sample_windows"].get<std::vector<int64_t>>();
      l.layer_cosines = d.value("layer_cosines", false);  // the saved sums are rank 0's: zeros here
      if (l.layer_cosines) l.earlier_cosine_sums = Eigen::VectorXd::Zero(l.layer);
      const auto& shape = d["magnitudes"];  // no window seen yet here: nothing to merge later
      if (shape[0].get<int64_t>() > 0)
        l.magnitudes = anova::MagnitudeStatistics::none(shape[0].get<int64_t>(), shape[1].get<int64_t>(), shape[2].get<int64_t>());
    }
    l.context_means = broadcastMatrix(l.context_means, d["context_means"], group);
    l.reservoir = broadcastMatrix(l.reservoir, d["reservoir"], group);
    l.attention_samples = broadcastMatrix(l.attention_samples, d["attention_samples"], group);
    keepOwn(l.context_means, l.context_windows, &l.context_labels, 1, own);
    keepOwn(l.reservoir, l.reservoir_windows, nullptr, l.position_sum.rows(), own);
    keepOwn(l.attention_samples, l.attention_sample_windows, nullptr, l.attention_input_sum.rows(), own);
    share.push_back(std::move(l));
  }
  return share;
}

}  // namespace posgeom::pass
