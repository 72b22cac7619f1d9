#include "posgeom/train/memory_estimate.h"

#include <algorithm>
#include <optional>

#include "posgeom/base/byte_size.h"
#include "posgeom/base/error.h"
#include "posgeom/base/process_memory.h"
#include "posgeom/runtime/device_timing.h"

namespace posgeom::train {
namespace {

constexpr long double kFloat = 4;                               // bytes: training runs in float32
constexpr long double kBeyondAnyMachine = 4611686018427387904.0L;  // 2^62 bytes
// Values kept per token, layer and unit of width for the backward pass: layer norms,
// q/k/v, the attention output, the MLP's 4x-wide input and activation, residuals and
// dropout masks (about 17 in half precision, Korthikanti et al. 2022; rounded up).
constexpr long double kValuesPerTokenAndWidth = 20;
// Scores, probabilities and their gradient (or the dropout mask) per attention entry.
constexpr long double kAttentionCopies = 3;

std::optional<long double> availableFor(const runtime::DeviceSpec& device) {
  if (device.isCuda()) {
    const auto memory = runtime::cudaMemory();
    return memory ? std::optional<long double>(static_cast<long double>(memory->free)) : std::nullopt;
  }
  const auto available = availableHostMemory();
  return available ? std::optional<long double>(static_cast<long double>(*available)) : std::nullopt;
}

}  // namespace

TrainingMemory estimateTrainingMemory(const TrainConfig& c, int64_t vocab) {
  const long double layers = static_cast<long double>(c.model.layers), width = static_cast<long double>(c.model.width),
                    heads = static_cast<long double>(c.model.heads), context = static_cast<long double>(c.model.context),
                    batch = static_cast<long double>(c.optim.batch_size), v = static_cast<long double>(vocab);
  const long double positions = c.model.position_encoding == "learned" ? static_cast<long double>(std::max(c.model.positions, c.model.context)) : 0;
  TrainingMemory m;
  // GPT-2: token (tied LM head) and position tables, 12 d^2 + 13 d per block, the final norm.
  m.parameters = (v + positions) * width + layers * (12 * width * width + 13 * width) + 2 * width;
  m.state = m.parameters * kFloat * (4 + 3);
  const long double tokens = batch * (context + 1);
  m.attention = kAttentionCopies * kFloat * batch * heads * context * context * layers;
  // Embeddings in and logits out (logits, their log-softmax and its gradient).
  m.activations = kFloat * tokens * (kValuesPerTokenAndWidth * width * layers + 2 * width + 3 * v) + m.attention;
  m.runtime = static_cast<long double>(runtime::runtimeAllowanceBytes(runtime::DeviceSpec{}));  // as analyze's estimate
  return m;
}

void requireTrainingMemory(const TrainConfig& c, int64_t vocab, const runtime::DeviceSpec& device) {
  const auto m = estimateTrainingMemory(c, vocab);
  const auto available = availableFor(device);
  const long double limit = available ? std::min(*available, kBeyondAnyMachine) : kBeyondAnyMachine;
  if (m.total() <= limit) return;
  const long double weights = m.state, batch = m.activations;
  // The keys that make it large: the model's size, or the batch (and the context, quadratic in attention).
  const std::string keys = weights >= batch ? "[model] layers " + std::to_string(c.model.layers) + " and width " + std::to_string(c.model.width)
                           : m.attention >= batch / 2
                               ? "[optim] batch_size " + std::to_string(c.optim.batch_size) + " and [model] context " + std::to_string(c.model.context)
                               : "[optim] batch_size " + std::to_string(c.optim.batch_size);
  throw InputError(c.source.empty() ? std::string("train") : c.source.string(),
                   "training needs about " + formatByteEstimate(m.total()) + " of memory (weights, gradients and Adam state " + formatByteEstimate(weights) +
                       ", one batch's activations " + formatByteEstimate(batch) + ", of which attention " + formatByteEstimate(m.attention) + "), and " +
                       (available ? formatByteEstimate(*available) + " is available" : std::string("that is more than any machine has")) +
                       ": lower " + keys);
}

}  // namespace posgeom::train
