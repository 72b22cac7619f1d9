// posgeom.heads: the heads analysis of `analyze --heads` for one block, from the attention
// inputs a state accumulated (add(..., attention_inputs=...)) and the block's query and key
// maps, which the caller takes from the model it holds.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>

#include "bindings.h"
#include "posgeom/anova/accumulator.h"
#include "posgeom/base/error.h"
#include "posgeom/heads/head_analysis.h"
#include "posgeom/heads/positional_kernel.h"
#include "posgeom/pass/plan.h"
#include "posgeom/report/tables.h"
#include "python_values.h"
#include "tensor_view.h"

namespace posgeom::python {
namespace {

// [heads, dh, d] (or [heads, dh] for a bias) as one Eigen matrix (vector) per head.
std::vector<Eigen::MatrixXd> perHead(nb::handle value, const char* name, int64_t dims) {
  const auto view = tensorView(value, name);
  const auto& t = view.tensor;
  if (t.dim() != dims)
    throw InputError(name, std::string("must be ") + (dims == 3 ? "[heads, head_dim, d]" : "[heads, head_dim]") + ", not " +
                               std::to_string(t.dim()) + "-dimensional");
  std::vector<Eigen::MatrixXd> out;
  const auto host = t.to(at::kCPU, at::kDouble);
  for (int64_t h = 0; h < t.size(0); ++h) out.push_back(anova::toEigen(host[h]));
  return out;
}

const anova::LayerStatistics& attentionInputsOf(const anova::AnalysisState& state, int64_t block) {
  for (const auto& l : state.layers)
    if (l.layer == block + 1 && l.attention_input_sum.size() > 0 && l.sequences > 0) return l;
  throw InputError("block", "the state holds no attention inputs of block " + std::to_string(block) +
                                " (accumulate hidden state " + std::to_string(block + 1) +
                                " with attention_inputs=True, or from Windows(heads=True))");
}

nb::list headsOf(const anova::AnalysisState& state, int64_t block, nb::handle q_weight, nb::handle k_weight, nb::handle q_bias,
                 nb::handle k_bias, bool causal, std::optional<double> scale, std::optional<double> rope_theta,
                 std::optional<int64_t> rotary_dims, bool rope_interleaved, std::optional<std::vector<double>> alibi_slopes,
                 int64_t kernel_skip, const std::string& query) {
  const auto& layer = attentionInputsOf(state, block);
  const auto wq = perHead(q_weight, "q_weight", 3), wk = perHead(k_weight, "k_weight", 3);
  const auto heads = static_cast<int64_t>(wq.size()), key_heads = static_cast<int64_t>(wk.size());
  if (heads == 0 || key_heads == 0 || heads % key_heads != 0)
    throw InputError("k_weight", "has " + std::to_string(key_heads) + " heads, which must divide q_weight's " + std::to_string(heads));
  const int64_t dh = wq.front().rows(), d = layer.attention_input_sum.cols();
  for (const auto* maps : {&wq, &wk})
    for (const auto& w : *maps)
      if (w.rows() != dh || w.cols() != d)
        throw InputError(maps == &wq ? "q_weight" : "k_weight", "holds a [" + std::to_string(w.rows()) + ", " + std::to_string(w.cols()) +
                                                                    "] head; the state's attention inputs need [" + std::to_string(dh) + ", " +
                                                                    std::to_string(d) + "]");
  const auto bq = q_bias.is_none() ? std::vector<Eigen::MatrixXd>() : perHead(q_bias, "q_bias", 2);
  const auto bk = k_bias.is_none() ? std::vector<Eigen::MatrixXd>() : perHead(k_bias, "k_bias", 2);
  if (!bq.empty() && (static_cast<int64_t>(bq.size()) != heads || bq.front().size() != dh))
    throw InputError("q_bias", "must be [" + std::to_string(heads) + ", " + std::to_string(dh) + "]");
  if (!bk.empty() && (static_cast<int64_t>(bk.size()) != key_heads || bk.front().size() != dh))
    throw InputError("k_bias", "must be [" + std::to_string(key_heads) + ", " + std::to_string(dh) + "]");
  if (alibi_slopes && static_cast<int64_t>(alibi_slopes->size()) != heads)
    throw InputError("alibi_slopes", "gives " + std::to_string(alibi_slopes->size()) + " slopes for " + std::to_string(heads) + " heads");
  if (kernel_skip < 0 || kernel_skip >= layer.attention_input_sum.rows())
    throw InputError("kernel_skip", "must be 0 or more and below the window's " + std::to_string(layer.attention_input_sum.rows()) + " positions");
  if (scale && !(*scale > 0)) throw InputError("scale", "must be positive");

  heads::HeadOptions options;
  options.query = heads::parseQueryMode(query);
  options.kernel_skip = kernel_skip;
  // The positional subspace's ScreeNOT bound: the report's, fitted to the state as analyze fits it.
  const auto report = pass::fitReportOptions(pass::ReportOptions{}, anova::StateLayers(state.layers));
  options.subspace_k = report.screenot_k;
  options.subspace_strategy = report.screenot_strategy;

  positions::HeadPositions shared;
  shared.mask.causal = causal;
  shared.scale = scale.value_or(0.0);
  if (rope_theta) {
    if (!(*rope_theta > 0)) throw InputError("rope_theta", "must be positive");
    const int64_t dims = rotary_dims.value_or(dh);
    if (dims <= 0 || dims > dh || dims % 2) throw InputError("rotary_dims", "must be even and at most the head's " + std::to_string(dh));
    shared.rope.inverse_frequencies = heads::plainRope(*rope_theta, dims);
    shared.rope.pairing = rope_interleaved ? positions::RopePairing::kInterleaved : positions::RopePairing::kRotateHalf;
  }
  // The key bias matters only where keys rotate: elsewhere it adds q . b_k to every key alike.
  const bool key_bias = rope_theta.has_value();
  heads::BlockHeads b;
  b.block = block;
  b.means = layer.attention_input_sum / static_cast<double>(layer.sequences);
  b.samples = layer.attention_samples;
  for (int64_t h = 0; h < heads; ++h) {
    const auto kh = static_cast<std::size_t>(h / (heads / key_heads));
    const auto hi = static_cast<std::size_t>(h);
    b.maps.push_back({wq[hi], bq.empty() ? Eigen::VectorXd::Zero(dh) : Eigen::VectorXd(bq[hi].reshaped()), wk[kh],
                      key_bias && !bk.empty() ? Eigen::VectorXd(bk[kh].reshaped()) : Eigen::VectorXd()});
    heads::KernelSettings k;
    k.positions = shared;
    if (alibi_slopes) k.positions.additive = positions::alibiTerm((*alibi_slopes)[hi]);
    b.kernel.push_back(std::move(k));
  }
  std::vector<heads::HeadReport> reports;
  {
    nb::gil_scoped_release released;
    reports = heads::analyzeBlock(b, options);
  }
  // The rows of summary.json's "heads", written by the same code, then each head's curves.
  const auto rows = report::summaryJson(nlohmann::json::object(), {}, {}, reports).at("heads");
  nb::list out;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    auto row = nb::cast<nb::dict>(toPython(rows.at(i)));
    row["etc_curve"] = numpyOf(reports[i].etc_curve);
    row["profile"] = numpyOf(reports[i].profile);
    row["kernel_thumb"] = numpyOf(reports[i].kernel_thumb);
    out.append(row);
  }
  return out;
}

}  // namespace

void bindHeads(nb::module_& m) {
  m.def("heads", &headsOf, nb::arg("state"), nb::arg("block"), nb::arg("q_weight"), nb::arg("k_weight"), nb::kw_only(),
        nb::arg("q_bias") = nb::none(), nb::arg("k_bias") = nb::none(), nb::arg("causal") = true, nb::arg("scale") = nb::none(),
        nb::arg("rope_theta") = nb::none(), nb::arg("rotary_dims") = nb::none(), nb::arg("rope_interleaved") = false,
        nb::arg("alibi_slopes") = nb::none(), nb::arg("kernel_skip") = 5, nb::arg("query") = "sampled",
        nb::sig("def heads(state: State, block: int, q_weight: object, k_weight: object, *, q_bias: object | None = None, "
                "k_bias: object | None = None, causal: bool = True, scale: float | None = None, rope_theta: float | None = None, "
                "rotary_dims: int | None = None, rope_interleaved: bool = False, alibi_slopes: Sequence[float] | None = None, "
                "kernel_skip: int = 5, query: str = 'sampled') -> list[dict]"),
        "The positional kernel, ETC, window, class, QK decomposition and sparsity of every head of one block (0-based: it "
        "reads hidden state `block`), as `analyze --heads` reports them: from the attention inputs the state accumulated "
        "for that block, and the block's query and key maps, [heads, head_dim, d] each (k_weight may have fewer heads: "
        "grouped queries), with their biases [heads, head_dim]. scale: the logits' (default 1/sqrt(head_dim)); "
        "rope_theta and rotary_dims: plain RoPE on the first rotary_dims of each head (rotate-half pairs, or "
        "interleaved); alibi_slopes: one per head. Returns summary.json's row of each head, with its ETC curve, its "
        "kernel's last row (profile) and a thumbnail of its kernel as numpy arrays.");
}

}  // namespace posgeom::python
