#include "posgeom/report/tables.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "posgeom/heads/sampled_attention.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/report/html_report.h"
#include "posgeom/report/json_number.h"
#include "posgeom/report/number_text.h"
#include "posgeom/report/rope_band_tables.h"
#include "posgeom/report/summary_keys.h"

namespace posgeom::report {
namespace {

nlohmann::json vectorJson(const Eigen::VectorXd& v, Eigen::Index limit = -1) {
  nlohmann::json out = nlohmann::json::array();
  const Eigen::Index n = limit < 0 ? v.size() : std::min(limit, v.size());
  for (Eigen::Index i = 0; i < n; ++i) out.push_back(v[i]);
  return out;
}

template <typename T>
nlohmann::json optionalJson(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Rows of a JSON list as CSV with the given columns (null: empty cell).
std::string jsonTableCsv(const nlohmann::json& rows, const std::vector<std::string>& columns) {
  std::ostringstream table;
  for (std::size_t i = 0; i < columns.size(); ++i) table << (i ? "," : "") << columns[i];
  table << "\n";
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const auto& v = row.at(columns[i]);
      table << (i ? "," : "")
            << (v.is_null() ? "" : v.is_number_float() ? numberText(v.get<double>()) : v.is_string() ? v.get<std::string>() : v.dump());
    }
    table << "\n";
  }
  return table.str();
}

// The heads whose score is above heads::kPatternHeadAbove, highest first, as "B.H".
nlohmann::json namedHeads(const std::vector<heads::HeadReport>& reports, double heads::HeadReport::*score) {
  std::vector<const heads::HeadReport*> named;
  for (const auto& h : reports)
    if (h.*score > heads::kPatternHeadAbove) named.push_back(&h);
  std::stable_sort(named.begin(), named.end(), [score](const auto* a, const auto* b) { return a->*score > b->*score; });
  nlohmann::json out = nlohmann::json::array();
  for (const auto* h : named)
    out.push_back({{keys::kHead, std::to_string(h->block) + "." + std::to_string(h->head)}, {keys::kScore, h->*score}});
  return out;
}

// Issue 36's sink heads: per block, the heads sending more than heads::kSinkHeadAbove of their
// attention to key 0.
nlohmann::json sinkHeadsJson(const std::vector<heads::HeadReport>& reports) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& h : reports) {
    if (blocks.empty() || blocks.back()[keys::kBlock] != h.block) blocks.push_back({{keys::kBlock, h.block}, {keys::kHeads, nlohmann::json::array()}});
    if (h.sink_share > heads::kSinkHeadAbove) blocks.back()[keys::kHeads].push_back(h.head);
  }
  return {{keys::kNamedAbove, heads::kSinkHeadAbove}, {keys::kBlocks, blocks}};
}

// --corpus repeated-random: what the induction probe found.
nlohmann::json probeJson(const nlohmann::json& settings, const std::vector<heads::HeadReport>& reports) {
  const auto options = settings.value(keys::kHeadOptions, nlohmann::json::object());
  return {{keys::kCorpus, "repeated-random"},
          {keys::kRepeatPeriod, options.value(keys::kRepeatPeriod, int64_t{0})},
          {keys::kNamedAbove, heads::kPatternHeadAbove},
          {keys::kInductionHeads, namedHeads(reports, &heads::HeadReport::induction_score)},
          {keys::kPreviousTokenHeads, namedHeads(reports, &heads::HeadReport::previous_token_score)}};
}

// --save-kernels: a block's kernels over every query, [heads, T, T] (query rows, key
// columns), the default kernel and the mean-query one.
void writeKernels(const std::filesystem::path& path, const std::vector<const heads::HeadReport*>& hs) {
  io::SafetensorsWriter w;
  const int64_t t = hs.front()->kernel.rows();
  const std::vector<int64_t> shape{static_cast<int64_t>(hs.size()), t, t};
  for (const auto& [name, member] : {std::pair{"kernel", &heads::HeadReport::kernel},
                                     std::pair{"mean_query_kernel", &heads::HeadReport::mean_query_kernel}})
    w.addDeferred(name, io::DType::kF32, shape, [&hs, t, member = member](std::byte* out) {
      for (std::size_t h = 0; h < hs.size(); ++h)
        Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
            reinterpret_cast<float*>(out) + static_cast<int64_t>(h) * t * t, t, t) = (*hs[h]).*member;
    });
  w.setMetadata("heads", [&] {
    std::string list;
    for (const auto* h : hs) list += (list.empty() ? "" : ",") + std::to_string(h->head);
    return list;
  }());
  w.write(path);
}

}  // namespace

std::vector<std::string> csvLabels(const std::string& prefix, int64_t first, int64_t count) {
  std::vector<std::string> labels;
  labels.reserve(static_cast<std::size_t>(std::max<int64_t>(count, 0)));
  for (int64_t i = 0; i < count; ++i) labels.push_back(prefix + std::to_string(first + i));
  return labels;
}

std::string matrixCsv(const Eigen::MatrixXd& m, const CsvAxes& axes) {
  std::string out = axes.index_name;
  for (const auto& c : axes.columns) out += "," + c;
  out += '\n';
  out.reserve(out.size() + static_cast<std::size_t>(m.size()) * 21);
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    out += axes.rows.at(static_cast<std::size_t>(r));
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      out += ',';
      if (!std::isnan(m(r, c))) appendNumber(out, m(r, c));
    }
    out += '\n';
  }
  return out;
}

namespace {

nlohmann::json sharesJson(const metrics::VarianceShares& v) {
  return {{keys::kPositionShare, finiteOrNull(v.position)}, {keys::kContextShare, finiteOrNull(v.context)},
          {keys::kResidualShare, finiteOrNull(v.residual)}};
}

// A layer's massive activations (issue 36) as summary.json gives them.
nlohmann::json massiveJson(const metrics::MassiveActivations& m) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& d : m.top)
    top.push_back({{keys::kDim, d.dim},
                   {keys::kMaxAbs, d.max_abs},
                   {keys::kTimesMedian, finiteOrNull(d.times_median)},
                   {keys::kMassive, d.massive},
                   {keys::kWindow, d.window},
                   {keys::kPosition, d.position},
                   {keys::kTokenId, d.token >= 0 ? nlohmann::json(d.token) : nlohmann::json(nullptr)},
                   {keys::kPositions, d.positions},
                   {keys::kPos0Share, d.pos0_share}});
  return {{keys::kMedianAbs, m.median_abs},
          {keys::kMedianRelativeError, m.median_relative_error},
          {keys::kNamedAbove, metrics::kMassiveTimesMedian},
          {keys::kMassiveDimensions, m.massive_count},
          {keys::kTop, std::move(top)},
          {keys::kPosition0, {{keys::kPosNorm, m.position0_norm}, {keys::kMassiveShare, m.position0_massive_share}}},
          {keys::kVarianceShares,
           {{keys::kWithPosition0, sharesJson(m.with_position_0)}, {keys::kWithoutPosition0, sharesJson(m.without_position_0)}}}};
}

// massive_activations.csv's rows: each layer's top dimensions beside the layer's numbers.
nlohmann::json massiveRows(const nlohmann::json& layer_rows) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& layer : layer_rows) {
    if (!layer.contains(keys::kMassiveActivations)) continue;
    const auto& m = layer.at(keys::kMassiveActivations);
    for (const auto& d : m.at(keys::kTop)) {
      std::string positions;
      for (const auto& p : d.at(keys::kPositions)) positions += (positions.empty() ? "" : " ") + p.dump();
      rows.push_back({{keys::kLayer, layer.at(keys::kLayer)},
                      {keys::kDim, d.at(keys::kDim)},
                      {keys::kMaxAbs, d.at(keys::kMaxAbs)},
                      {keys::kTimesMedian, d.at(keys::kTimesMedian)},
                      {keys::kMassive, d.at(keys::kMassive).get<bool>() ? 1 : 0},
                      {keys::kMedianAbs, m.at(keys::kMedianAbs)},
                      {keys::kWindow, d.at(keys::kWindow)},
                      {keys::kPosition, d.at(keys::kPosition)},
                      {keys::kTokenId, d.at(keys::kTokenId)},
                      {keys::kPositions, positions},
                      {keys::kPos0Share, d.at(keys::kPos0Share)},
                      {keys::kPos0MassiveShare, m.at(keys::kPosition0).at(keys::kMassiveShare)},
                      {keys::kPositionShareWith0, m.at(keys::kVarianceShares).at(keys::kWithPosition0).at(keys::kPositionShare)},
                      {keys::kPositionShareWithout0, m.at(keys::kVarianceShares).at(keys::kWithoutPosition0).at(keys::kPositionShare)}});
    }
  }
  return rows;
}

}  // namespace

nlohmann::json summaryJson(const nlohmann::json& settings, const std::vector<metrics::LayerMetrics>& layers,
                           const std::vector<metrics::CrossLayerMetrics>& cross,
                           const std::vector<heads::HeadReport>& head_reports) {
  nlohmann::json out = settings;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& m : layers) {
    nlohmann::json row = {{keys::kLayer, m.layer},
                          {keys::kSequences, m.sequences},
                          {keys::kPositions, m.positions},
                          {keys::kScreenotRank, m.screenot.rank},
                          {keys::kScreenotThreshold, m.screenot.threshold},
                          {keys::kStableRank, m.stable_rank},
                          {keys::kExplainedRatio, m.explained_ratio},
                          {keys::kRelativeNorm, optionalJson(m.relative_norm)},
                          {keys::kGlobalMeanNorm, m.global_mean_norm},
                          {keys::kPosFroNorm, m.pos_fro_norm},
                          {keys::kLowfreqEnergy, m.lowfreq_energy},
                          {keys::kIncoherenceMax, m.incoherence.max},
                          {keys::kIncoherenceMean, m.incoherence.mean},
                          {keys::kMeanHiddenNorm, m.mean_hidden_norm},
                          {keys::kPreviousLayerCosine, optionalJson(m.previous_layer_cosine)},
                          {keys::kTopSingularValuesPos, vectorJson(m.singular_pos, 20)}};
    if (m.massive) row[keys::kMassiveActivations] = massiveJson(*m.massive);
    if (m.label_cosines) {
      row[keys::kContextCosWithinLabel] = m.label_cosines->within;
      row[keys::kContextCosBetweenLabel] = m.label_cosines->between;
      row[keys::kContextLabels] = m.label_cosines->labels;
    }
    rows.push_back(std::move(row));
  }
  // Mean and spread over layers of the label cosines, as the paper's Table 1 gives them.
  std::vector<double> between, within;
  for (const auto& m : layers)
    if (m.label_cosines) between.push_back(m.label_cosines->between), within.push_back(m.label_cosines->within);
  if (!between.empty()) {
    auto mean_std = [](const std::vector<double>& v) {
      double mean = 0, var = 0;
      for (double x : v) mean += x / static_cast<double>(v.size());
      for (double x : v) var += (x - mean) * (x - mean) / static_cast<double>(v.size());
      return std::make_pair(mean, std::sqrt(var));
    };
    const auto [b_mean, b_std] = mean_std(between);
    const auto [w_mean, w_std] = mean_std(within);
    out[keys::kContextSimilarity] = {{keys::kBetweenMean, b_mean}, {keys::kBetweenStd, b_std}, {keys::kWithinMean, w_mean},
                                     {keys::kWithinStd, w_std},   {keys::kLayers, between.size()}};
  }
  out[keys::kLayers] = std::move(rows);
  nlohmann::json consistency = nlohmann::json::array();
  for (const auto& c : cross)
    consistency.push_back({{keys::kFrom, c.from}, {keys::kTo, c.to}, {keys::kBasisCosine, c.basis_cosine},
                           {keys::kPrincipalAngleCosines, vectorJson(c.principal_cosines)}});
  out[keys::kCrossLayer] = std::move(consistency);
  if (const auto cosines = metrics::layerCosines(layers); !cosines.layers.empty()) {
    nlohmann::json matrix = nlohmann::json::array();
    for (Eigen::Index i = 0; i < cosines.cosine.rows(); ++i) matrix.push_back(vectorJson(cosines.cosine.row(i).transpose()));
    out[keys::kLayerCosines] = {{keys::kLayers, cosines.layers}, {keys::kCosine, std::move(matrix)}};
  }
  if (!head_reports.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& h : head_reports)
      list.push_back({{keys::kBlock, h.block},
                      {keys::kHead, h.head},
                      {keys::kEtc, h.etc},
                      {keys::kKeys, h.keys},
                      {keys::kClass, heads::headKindName(h.kind)},
                      {keys::kWindow90, h.window90},
                      {keys::kEtcMeanQuery, h.etc_mean_query},
                      {keys::kDenominatorCv, finiteOrNull(h.denominator_cv)},
                      {keys::kContextual, h.contextual},
                      {keys::kQkSharePosPos, h.qk_shares[0]},
                      {keys::kQkSharePosCvec, h.qk_shares[1]},
                      {keys::kQkShareCvecPos, h.qk_shares[2]},
                      {keys::kQkShareCvecCvec, h.qk_shares[3]},
                      {keys::kQkEnergyPos, h.qk_energy_pos},
                      {keys::kQkRank, h.qk_rank},
                      {keys::kAttentionKeys90, finiteOrNull(h.attention_keys90)},
                      {keys::kAttentionEntropy, finiteOrNull(h.attention_entropy)},
                      {keys::kKernelTv, finiteOrNull(h.kernel_tv)},
                      {keys::kEquivarianceTv, finiteOrNull(h.equivariance_tv)},
                      {keys::kKernelQuerySpread, finiteOrNull(h.kernel_query_spread)},
                      {keys::kQkDiagonalShare, h.qk_basis ? finiteOrNull(h.qk_basis->diagonal_share) : nullptr},
                      {keys::kQkBlockShare, h.qk_basis ? finiteOrNull(h.qk_basis->block_share) : nullptr},
                      {keys::kInductionScore, finiteOrNull(h.induction_score)},
                      {keys::kPreviousTokenScore, finiteOrNull(h.previous_token_score)},
                      {keys::kSinkShare, finiteOrNull(h.sink_share)},
                      {keys::kFirstKeysShare, finiteOrNull(h.first_keys_share)},
                      {keys::kSelfShare, finiteOrNull(h.self_share)},
                      {keys::kLearnedSinkShare, finiteOrNull(h.learned_sink_share)},
                      {keys::kKernelLearnedSinkShare, finiteOrNull(h.kernel_learned_sink_share)},
                      {keys::kRopeBands, ropeBandsJson(h)},
                      {keys::kSamples, h.samples}});
    out[keys::kHeads] = std::move(list);
    if (std::isfinite(head_reports.front().induction_score)) out[keys::kProbe] = probeJson(settings, head_reports);
    if (std::isfinite(head_reports.front().sink_share)) out[keys::kSinkHeads] = sinkHeadsJson(head_reports);
    auto layout = ropeBandLayoutJson(head_reports);
    if (!layout.empty()) out[keys::kRopeBandLayout] = std::move(layout);
  }
  return out;
}

void writeTables(const std::filesystem::path& dir, const nlohmann::json& summary,
                 const std::vector<metrics::LayerMetrics>& layers, const std::vector<heads::HeadReport>& head_reports) {
  io::writeTextFileAtomically(dir / "layers.csv",
                              jsonTableCsv(summary.at(keys::kLayers), {keys::kLayersCsvColumns.begin(), keys::kLayersCsvColumns.end()}));
  if (const auto cosines = metrics::layerCosines(layers); !cosines.layers.empty()) {
    std::vector<std::string> names;
    for (const int64_t l : cosines.layers) names.push_back("hidden." + std::to_string(l));
    io::writeTextFileAtomically(dir / keys::kLayerCosinesCsv, matrixCsv(cosines.cosine, {"layer", names, names}));
  }
  const auto massive = massiveRows(summary.at(keys::kLayers));
  if (!massive.empty())
    io::writeTextFileAtomically(dir / keys::kMassiveCsv, jsonTableCsv(massive, {keys::kMassiveCsvColumns.begin(), keys::kMassiveCsvColumns.end()}));
  // Rows of P are the positions after skip_first, numbered as in the window.
  const int64_t first = summary.value(keys::kSkipFirst, int64_t{0});
  for (const auto& m : layers) {
    const std::string l = "_L" + std::to_string(m.layer) + ".csv";
    const auto positions = csvLabels("", first, m.positional.rows());
    const auto frequencies = csvLabels("", 0, m.gram_dct.rows());
    io::writeTextFileAtomically(dir / ("pos" + l),
                                matrixCsv(m.positional, {"position", positions, csvLabels("d", 0, m.positional.cols())}));
    io::writeTextFileAtomically(dir / ("gram" + l),
                                matrixCsv(m.gram, {"position", positions, csvLabels("p", first, m.gram.cols())}));
    io::writeTextFileAtomically(dir / ("gram_dct" + l),
                                matrixCsv(m.gram_dct, {"frequency", frequencies, csvLabels("f", 0, m.gram_dct.cols())}));
    io::writeTextFileAtomically(dir / ("spiral" + l),
                                matrixCsv(m.spiral, {"position", positions, csvLabels("pc", 1, m.spiral.cols())}));
    io::writeTextFileAtomically(dir / ("power_spectrum" + l),
                                matrixCsv(m.power_spectrum, {"frequency", csvLabels("", 0, m.power_spectrum.size()), {"power"}}));
    const Eigen::Index n = std::max({m.singular_pos.size(), m.singular_cvec.size(), m.singular_resid.size()});
    Eigen::MatrixXd sv = Eigen::MatrixXd::Constant(n, 3, std::nan(""));  // shorter spectra: empty cells
    sv.col(0).head(m.singular_pos.size()) = m.singular_pos;
    sv.col(1).head(m.singular_cvec.size()) = m.singular_cvec;
    sv.col(2).head(m.singular_resid.size()) = m.singular_resid;
    io::writeTextFileAtomically(dir / ("singular_values" + l),
                                matrixCsv(sv, {"component", csvLabels("", 1, n), {"pos", "cvec", "resid"}}));
  }
  if (!head_reports.empty()) {
    io::writeTextFileAtomically(dir / "heads.csv", jsonTableCsv(summary.at(keys::kHeads), {keys::kHeadsCsvColumns.begin(), keys::kHeadsCsvColumns.end()}));
    const auto bands = ropeBandRows(head_reports);
    if (!bands.empty())
      io::writeTextFileAtomically(dir / keys::kRopeBandsCsv,
                                  jsonTableCsv(bands, {keys::kRopeBandsCsvColumns.begin(), keys::kRopeBandsCsvColumns.end()}));
    std::map<int64_t, std::vector<const heads::HeadReport*>> by_block;
    for (const auto& h : head_reports) by_block[h.block].push_back(&h);
    for (const auto& [block, hs] : by_block) {
      Eigen::MatrixXd etc(static_cast<Eigen::Index>(hs.size()), hs.front()->etc_curve.size());
      Eigen::MatrixXd profile(static_cast<Eigen::Index>(hs.size()), hs.front()->profile.size());
      std::vector<std::string> head_labels;
      for (std::size_t i = 0; i < hs.size(); ++i) {
        etc.row(static_cast<Eigen::Index>(i)) = hs[i]->etc_curve.transpose();
        profile.row(static_cast<Eigen::Index>(i)) = hs[i]->profile.transpose();
        head_labels.push_back(std::to_string(hs[i]->head));
      }
      // ETC(n) at every query position n; the kernel of the last query over key positions.
      io::writeTextFileAtomically(dir / ("etc_B" + std::to_string(block) + ".csv"),
                                  matrixCsv(etc, {"head", head_labels, csvLabels("q", 0, etc.cols())}));
      io::writeTextFileAtomically(dir / ("kernel_B" + std::to_string(block) + ".csv"),
                                  matrixCsv(profile, {"head", head_labels, csvLabels("k", 0, profile.cols())}));
      if (hs.front()->kernel.size() > 0) writeKernels(dir / ("kernels_B" + std::to_string(block) + ".safetensors"), hs);
    }
    for (const auto& h : head_reports) {
      const std::string name = "_B" + std::to_string(h.block) + "_H" + std::to_string(h.head);
      if (h.qk_basis) {
        const auto& corner = h.qk_basis->standard_corner;
        io::writeTextFileAtomically(dir / ("qkbasis" + name + "_standard.csv"),
                                    matrixCsv(corner, {"dim", csvLabels("", 0, corner.rows()), csvLabels("d", 0, corner.cols())}));
        const auto& kept = h.qk_basis->kept_corner;
        io::writeTextFileAtomically(dir / ("qkbasis" + name + "_positional.csv"),
                                    matrixCsv(kept, {"direction", csvLabels("", 1, kept.rows()), csvLabels("v", 1, kept.cols())}));
      }
      for (std::size_t i = 0; i < h.qk_maps.size(); ++i) {
        const auto& map = h.qk_maps[i];
        io::writeTextFileAtomically(
            dir / ("qk" + name + "_" + heads::qkMapNames()[i] + ".csv"),
            matrixCsv(map, {"query", csvLabels("", 0, map.rows()), csvLabels("k", 0, map.cols())}));
      }
    }
  }
  io::writeTextFileAtomically(dir / "report.html", htmlReport(summary, layers, head_reports));
  // summary.json last: its presence marks a complete report.
  io::writeTextFileAtomically(dir / keys::kSummaryFile, summary.dump(2) + "\n");
}

}  // namespace posgeom::report
