#pragma once
// PassModel's definition: the loaded model with the numerics it computes in. Private to
// the pass's Torch side.
#include "posgeom/model/load/loader.h"
#include "posgeom/model/numerics.h"
#include "posgeom/pass/analysis_pass.h"

namespace posgeom::pass {

class PassModel {
 public:
  PassModel(model::LoadedModel loaded, model::Numerics numerics) : loaded_(std::move(loaded)), numerics_(numerics) {}
  const model::Model& model() const { return *loaded_.model; }
  const model::Numerics& numerics() const { return numerics_; }
  int64_t weightBytesRead() const { return *loaded_.bytes_read; }

 private:
  model::LoadedModel loaded_;
  model::Numerics numerics_;
};

}  // namespace posgeom::pass
