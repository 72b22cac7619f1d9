#pragma once
// Included first by every posgeom header that exposes Torch types: such a header compiles
// only in the targets that may use Torch (cmake/TorchBoundary.cmake defines the macro there).
#ifndef POSGEOM_TORCH_ALLOWED
#error "Torch types stay inside model, the accumulators, runtime, train and the pass's Torch side (DESIGN §2)"
#endif
