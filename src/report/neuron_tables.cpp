#include "posgeom/report/neuron_tables.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "posgeom/report/json_number.h"
#include "posgeom/report/number_text.h"
#include "posgeom/report/summary_keys.h"
#include "posgeom/report/svg_plot.h"
#include "posgeom/tokenize/token_names.h"

namespace posgeom::report {
namespace {

nlohmann::json tokensJson(const std::vector<std::pair<int32_t, double>>& tokens, const std::vector<std::string>& names) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [id, value] : tokens)
    out.push_back({{keys::kToken, tokenize::tokenName(names, id)}, {keys::kId, id}, {keys::kContribution, value}});
  return out;
}

std::string tokensCell(const std::vector<std::pair<int32_t, double>>& tokens, const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& [id, value] : tokens) {
    char number[32];
    std::snprintf(number, sizeof number, "%.4g", value);
    joined += (joined.empty() ? "" : " | ") + tokenize::tokenName(names, id) + " (" + number + ")";
  }
  std::string quoted = "\"";
  for (const char c : joined) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string headName(int64_t head) { return "0." + std::to_string(head); }

}  // namespace

nlohmann::json neuronsJson(const heads::NeuronAnalysis& a, const std::vector<std::string>& names) {
  nlohmann::json heads = nlohmann::json::array(), groups = nlohmann::json::array(), top = nlohmann::json::array();
  for (const auto h : a.contextual_heads) heads.push_back(headName(h));
  for (const auto& g : a.groups) {
    nlohmann::json members = nlohmann::json::array();
    for (const auto h : g.heads) members.push_back(headName(h));
    groups.push_back({{keys::kHeads, members}, {keys::kMinSimilarity, g.min_similarity}});
  }
  double correlation_sum = 0, window_sum = 0;
  int64_t correlations = 0;
  for (std::size_t i = 0; i < a.neurons.size() && i < kNeuronsInSummary; ++i) {
    const auto& n = a.neurons[i];
    top.push_back({{keys::kNeuron, n.neuron}, {keys::kScore, n.score}, {keys::kCorrelation, finiteOrNull(n.correlation)},
                   {keys::kWindowCorrelation, finiteOrNull(n.window_correlation)},
                   {keys::kTopPositive, tokensJson(n.top_positive, names)}, {keys::kTopNegative, tokensJson(n.top_negative, names)}});
    if (std::isfinite(n.correlation) && std::isfinite(n.window_correlation))
      correlation_sum += n.correlation, window_sum += n.window_correlation, ++correlations;
  }
  const auto meanTop = [correlations](double sum) {
    return correlations > 0 ? nlohmann::json(sum / static_cast<double>(correlations)) : nlohmann::json(nullptr);
  };
  return {{keys::kBlock, 0},
          {keys::kContextualHeads, heads},
          {keys::kGroups, groups},
          {keys::kInverseNormScale, a.inverse_scale},
          {keys::kWindows, a.windows},
          {keys::kNeurons, a.neurons.size()},
          {keys::kMeanCorrelationTop, meanTop(correlation_sum)},
          {keys::kMeanWindowCorrelationTop, meanTop(window_sum)},
          {keys::kTop, top}};
}

std::string neuronsCsv(const heads::NeuronAnalysis& a, const std::vector<std::string>& names) {
  std::ostringstream out;
  out << "neuron,score,correlation,window_correlation,top_positive,top_negative\n";
  for (const auto& n : a.neurons) {
    out << n.neuron << "," << numberText(n.score) << ",";
    for (const double c : {n.correlation, n.window_correlation}) out << (std::isfinite(c) ? numberText(c) : "") << ",";
    out << "" << tokensCell(n.top_positive, names) << "," << tokensCell(n.top_negative, names) << "\n";
  }
  return out.str();
}

std::string neuronsSection(const nlohmann::json& summary) {
  if (!summary.contains(keys::kNeurons)) return "";
  const auto& n = summary[keys::kNeurons];
  std::ostringstream out;
  std::string heads;
  for (const auto& h : n[keys::kContextualHeads]) heads += (heads.empty() ? "" : ", ") + h.get<std::string>();
  std::string groups;
  for (const auto& g : n[keys::kGroups]) {
    std::string members;
    for (const auto& h : g[keys::kHeads]) members += (members.empty() ? "" : " ") + h.get<std::string>();
    groups += (groups.empty() ? "" : "; ") + std::string("{") + members + "}";
  }
  out << "<section id=\"neurons\"><h2>Contextual neurons of block 0</h2><p>Contextual heads: "
      << escapeXml(heads.empty() ? std::string("none") : heads) << ". Groups of alike kernels: " << escapeXml(groups.empty() ? std::string("none") : groups)
      << ". Score: the spread over the vocabulary of a token's contribution to the neuron's pre-activation through "
         "those heads (attention frozen at their kernels); correlation: that prediction against the neuron's real "
         "pre-activation on the "
      << n[keys::kWindows].get<int64_t>() << " sampled windows, centred per position, and of its sums over each window (window correlation).</p>";
  out << "<div class=\"scroll\"><table class=\"numbers\" id=\"neuron-table\"><tr><th>neuron</th><th>score</th><th>correlation</th>"
         "<th>window correlation</th><th>top positive tokens</th><th>top negative tokens</th></tr>";
  const auto tokens = [](const nlohmann::json& list) {
    std::string joined;
    for (const auto& t : list) joined += (joined.empty() ? "" : " ") + t[keys::kToken].get<std::string>();
    return escapeXml(joined);
  };
  for (const auto& row : n[keys::kTop]) {
    char score[32], correlation[32] = "", window[32] = "";
    std::snprintf(score, sizeof score, "%.4g", row[keys::kScore].get<double>());
    if (row[keys::kCorrelation].is_number()) std::snprintf(correlation, sizeof correlation, "%.3f", row[keys::kCorrelation].get<double>());
    if (row[keys::kWindowCorrelation].is_number()) std::snprintf(window, sizeof window, "%.3f", row[keys::kWindowCorrelation].get<double>());
    out << "<tr><td>" << row[keys::kNeuron].get<int64_t>() << "</td><td>" << score << "</td><td>" << correlation << "</td><td>"
        << window << "</td><td>"
        << tokens(row[keys::kTopPositive]) << "</td><td>" << tokens(row[keys::kTopNegative]) << "</td></tr>";
  }
  out << "</table></div></section>\n";
  return out.str();
}

}  // namespace posgeom::report
