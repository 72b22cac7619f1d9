// Found first on the include path of the targets that must not use Torch (see
// cmake/TorchBoundary.cmake): a Torch include there is a compile error, not a habit.
#error "Torch types stay inside model, the accumulators, runtime, train and the pass's Torch side (DESIGN §2)"
