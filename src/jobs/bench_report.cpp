#include <cstdio>
#include <sstream>

#include "posgeom/jobs/bench_job.h"
#include "posgeom/pass/memory_estimate.h"

namespace posgeom::jobs {
namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

nlohmann::json optionalJson(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

// "12.1% over forward; the accumulators' own time 6.9% of the pass"
std::string overheadText(double forward_tokens_per_s, double tokens_per_s, const std::optional<double>& share) {
  std::string text = fixed(100.0 * (forward_tokens_per_s / tokens_per_s - 1.0), 1) + "% over forward";
  if (share) text += "; the accumulators' own time " + fixed(100.0 * *share, 1) + "% of the pass";
  return text;
}

}  // namespace

nlohmann::json benchJson(const BenchResult& r) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : r.models) {
    nlohmann::json j = {{"name", m.name},
                        {"model_type", m.model_type},
                        {"layers", m.layers},
                        {"hidden_size", m.hidden_size},
                        {"heads", m.heads},
                        {"kv_heads", m.kv_heads},
                        {"intermediate_size", m.intermediate_size},
                        {"vocab_size", m.vocab_size},
                        {"seq_len", m.seq_len},
                        {"batch", m.batch},
                        {"checkpoint_bytes", m.checkpoint_bytes},
                        {"flops_per_token", m.flops_per_token},
                        {"forward_tokens_per_s", m.forward_tokens_per_s},
                        {"analyze_tokens_per_s", m.analyze_tokens_per_s},
                        {"analyze_heads_tokens_per_s", m.analyze_heads_tokens_per_s},
                        {"forward_gemm_share", m.forward_gemm_share},
                        {"analyze_overhead", m.forward_tokens_per_s / m.analyze_tokens_per_s - 1.0},
                        {"analyze_heads_overhead", m.forward_tokens_per_s / m.analyze_heads_tokens_per_s - 1.0},
                        {"analyze_accumulator_share", optionalJson(m.analyze_accumulator_share)},
                        {"analyze_heads_accumulator_share", optionalJson(m.analyze_heads_accumulator_share)},
                        {"metrics_end_stage_s", m.metrics_end_stage_s},
                        {"heads_end_stage_s", m.heads_end_stage_s},
                        {"metrics_per_layer_s", m.metrics_per_layer_s},
                        {"heads_per_head_s", m.heads_per_head_s},
                        {"heads_analysed", m.heads_analysed},
                        {"eigh_s", m.eigh_s},
                        {"metrics_per_layer_over_eigh", m.eigh_s > 0 ? m.metrics_per_layer_s / m.eigh_s : 0.0},
                        {"peak_rss_bytes", m.peak_rss_bytes}};
    if (m.device_memory_bytes) j["device_memory_bytes"] = *m.device_memory_bytes;
    if (m.layer_major_tokens_per_s) {
      j["wave_windows"] = m.wave_windows;
      j["layer_major_tokens_per_s"] = *m.layer_major_tokens_per_s;
      j["layer_major_vs_resident"] = *m.layer_major_vs_resident;
    }
    auto& rounds = j["rounds_s"] = nlohmann::json::array();
    for (const auto& round : m.rounds)
      rounds.push_back({{"forward", round.forward},
                        {"analyze", round.analyze},
                        {"analyze_heads", round.analyze_heads},
                        {"analyze_accumulating", round.analyze_accumulating},
                        {"analyze_heads_accumulating", round.analyze_heads_accumulating}});
    models.push_back(std::move(j));
  }
  nlohmann::json out = {{"tool", "posgeom bench"},
                        {"version", POSGEOM_VERSION},
                        {"device", r.device},
                        {"dtype", r.dtype},
                        {"compute", r.compute},
                        {"threads", r.threads},
                        {"blas", r.blas},
                        {"cpu", r.cpu},
                        {"gemm_size", r.gemm_size},
                        {"gemm_gflops", r.gemm_gflops},
                        {"tokenizer", r.tokenizer_source},
                        {"tokenizer_tokens_per_s", r.tokenizer_tokens_per_s},
                        {"models", models}};
  if (!r.models.empty()) {
    const auto& first = models.front();
    for (const char* key : {"forward_tokens_per_s", "analyze_tokens_per_s", "analyze_heads_tokens_per_s",
                            "forward_gemm_share", "flops_per_token", "peak_rss_bytes", "checkpoint_bytes"})
      out[key] = first[key];
    out["model"] = first["name"];
    out["tokenizer_share"] = r.models.front().forward_tokens_per_s / r.tokenizer_tokens_per_s;
  }
  return out;
}

std::string benchTable(const BenchResult& r) {
  std::ostringstream out;
  out << "device " << r.device << ", " << r.compute << ", " << r.threads << " threads; CPU " << r.cpu << "\n";
  out << "BLAS " << r.blas << "\n";
  out << "matrix multiply (" << r.gemm_size << "^3, " << r.dtype << "): " << fixed(r.gemm_gflops, 1) << " GFLOP/s\n";
  out << "tokenizer (" << r.tokenizer_source << "): " << fixed(r.tokenizer_tokens_per_s, 0) << " tokens/s";
  if (!r.models.empty())
    out << ", " << fixed(100.0 * r.models.front().forward_tokens_per_s / r.tokenizer_tokens_per_s, 4)
        << "% of the " << r.models.front().name << " pass's time";
  out << "\n\n";
  for (const auto& m : r.models) {
    out << m.name << " (" << m.model_type << ", " << m.layers << " x " << m.hidden_size << ", " << m.heads << "/"
        << m.kv_heads << " heads), T=" << m.seq_len << ", batch " << m.batch << ", " << fixed(m.flops_per_token / 1e9, 3)
        << " GFLOP/token\n";
    out << "  forward          " << fixed(m.forward_tokens_per_s, 1) << " tokens/s, "
        << fixed(100.0 * m.forward_gemm_share, 1) << "% of the matrix-multiply throughput\n";
    out << "  analyze          " << fixed(m.analyze_tokens_per_s, 1) << " tokens/s ("
        << overheadText(m.forward_tokens_per_s, m.analyze_tokens_per_s, m.analyze_accumulator_share)
        << "); end stage " << fixed(m.metrics_end_stage_s, 2) << " s per run\n";
    out << "  analyze --heads  " << fixed(m.analyze_heads_tokens_per_s, 1) << " tokens/s ("
        << overheadText(m.forward_tokens_per_s, m.analyze_heads_tokens_per_s, m.analyze_heads_accumulator_share)
        << "); heads end stage " << fixed(m.heads_end_stage_s, 2) << " s per run\n";
    if (m.layer_major_tokens_per_s)
      out << "  layer-major      " << fixed(*m.layer_major_tokens_per_s, 1) << " tokens/s, "
          << fixed(100.0 * *m.layer_major_vs_resident, 1) << "% of resident on the same " << m.wave_windows
          << " windows (one wave)\n";
    out << "  end stages       metrics " << fixed(m.metrics_per_layer_s, 2) << " s per layer ("
        << fixed(m.eigh_s > 0 ? m.metrics_per_layer_s / m.eigh_s : 0.0, 2) << " x one " << m.hidden_size << "^2 eigendecomposition, "
        << fixed(m.eigh_s, 2) << " s), heads " << fixed(m.heads_per_head_s, 3) << " s per head\n";
    out << "  peak RSS " << formatBytes(m.peak_rss_bytes) << " (checkpoint " << formatBytes(m.checkpoint_bytes) << ", "
        << formatBytes(m.peak_rss_bytes - m.checkpoint_bytes) << " beyond it)";
    if (m.device_memory_bytes) out << "; device memory in use " << formatBytes(*m.device_memory_bytes);
    out << "\n";
  }
  return out.str();
}

}  // namespace posgeom::jobs
