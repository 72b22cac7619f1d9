#include "posgeom/model/flops.h"

namespace posgeom::model {

int64_t productParameters(const std::vector<TensorSpec>& specs) {
  int64_t n = 0;
  for (const auto& s : specs)
    if (s.use == TensorSpec::Use::kProduct && s.shape.size() == 2) n += s.numel();
  return n;
}

double activeProductParameters(const std::vector<TensorSpec>& specs) {
  double n = 0;
  for (const auto& s : specs)
    if (s.use == TensorSpec::Use::kProduct && s.shape.size() == 2) n += static_cast<double>(s.numel()) * s.active_share;
  return n;
}

double forwardFlopsPerToken(const ModelConfig& config, const std::vector<TensorSpec>& specs, int64_t seq_len,
                            bool causal) {
  const double keys = causal ? (static_cast<double>(seq_len) + 1.0) / 2.0 : static_cast<double>(seq_len);
  // 2 flops a query-key dim for the logits and 2 a value dim for the weighted sum; the same
  // width but where latent attention's values are narrower than its queries and keys.
  const int64_t value_dims = config.latent.any() ? config.latent.value_dims : config.headDim();
  const double attention = 2.0 * static_cast<double>(config.num_heads * (config.headDim() + value_dims)) * keys;
  return 2.0 * activeProductParameters(specs) + static_cast<double>(config.num_layers) * attention;
}

}  // namespace posgeom::model
