#pragma once
// DeviceSpec and ComputeDtype as Torch's types: for the targets that may use Torch.
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>

#include "posgeom/runtime/device.h"

namespace posgeom::runtime {

at::Device torchDevice(const DeviceSpec& device);
at::ScalarType torchDtype(ComputeDtype dtype);

}  // namespace posgeom::runtime
