// A Torch-free target that includes Torch directly: must not compile.
#include <ATen/ATen.h>
