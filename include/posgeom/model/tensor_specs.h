#pragma once
// Small builder for an architecture's list of expected tensors.
#include <string>
#include <vector>

#include "posgeom/model/architecture.h"

namespace posgeom::model {

class TensorSpecs {
 public:
  TensorSpecs& weight(const std::string& name, std::vector<int64_t> shape) {
    return add(name, std::move(shape), TensorSpec::Init::kNormal);
  }
  TensorSpecs& bias(const std::string& name, int64_t size) { return add(name, {size}, TensorSpec::Init::kZeros); }
  // A LayerNorm: <prefix>.weight (ones) and, unless RMS, <prefix>.bias (zeros).
  TensorSpecs& norm(const std::string& prefix, int64_t size, bool with_bias = true) {
    add(prefix + ".weight", {size}, TensorSpec::Init::kOnes);
    return with_bias ? bias(prefix + ".bias", size) : *this;
  }
  // A norm's weight of any shape (ones): Command-R+'s per-head q/k norms [heads, head_dim].
  TensorSpecs& scale(const std::string& name, std::vector<int64_t> shape) { return add(name, std::move(shape), TensorSpec::Init::kOnes); }
  // One expert's matrix of a mixture: each token is routed to `active_share` of the experts.
  TensorSpecs& expert(const std::string& name, std::vector<int64_t> shape, double active_share) {
    add(name, std::move(shape), TensorSpec::Init::kNormal);
    specs_.back().active_share = active_share;
    return *this;
  }
  // An embedding table: looked up, not multiplied.
  TensorSpecs& table(const std::string& name, std::vector<int64_t> shape) {
    add(name, std::move(shape), TensorSpec::Init::kNormal);
    specs_.back().use = TensorSpec::Use::kLookup;
    return *this;
  }
  // A tensor used only after the last hidden state (LM heads), perhaps absent.
  TensorSpecs& output(const std::string& name, std::vector<int64_t> shape, bool optional = true) {
    add(name, std::move(shape), TensorSpec::Init::kNormal);
    specs_.back().optional = optional;
    specs_.back().use = TensorSpec::Use::kOutput;
    return *this;
  }
  // An LM head, which is the token embedding itself when `tied` (tie_word_embeddings): a
  // stored one is then not used, as transformers ties it over whatever the file holds.
  TensorSpecs& head(const std::string& name, std::vector<int64_t> shape, bool tied, bool optional = false) {
    output(name, std::move(shape), tied || optional);
    specs_.back().tied = tied;
    return *this;
  }
  // The last tensor added is held in float32 (TensorSpec::float32).
  TensorSpecs& inFloat32() {
    specs_.back().float32 = true;
    return *this;
  }
  // The tensors added from here on are block `b`'s (TensorSpec::block); -1: outside the blocks.
  TensorSpecs& inBlock(int64_t b) {
    block_ = b;
    return *this;
  }
  TensorSpecs& outsideBlocks() { return inBlock(-1); }
  std::vector<TensorSpec> take() { return std::move(specs_); }

 private:
  TensorSpecs& add(const std::string& name, std::vector<int64_t> shape, TensorSpec::Init init) {
    specs_.push_back({name, std::move(shape), init, false});
    specs_.back().block = block_;
    return *this;
  }
  std::vector<TensorSpec> specs_;
  int64_t block_ = -1;
};

}  // namespace posgeom::model
