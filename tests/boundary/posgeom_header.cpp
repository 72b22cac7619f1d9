// A Torch-free target that includes a posgeom header exposing Torch types: must not compile.
#include "posgeom/model/model.h"
