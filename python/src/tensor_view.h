#pragma once
// A Python array (a torch tensor, a numpy array: anything with __dlpack__) as an at::Tensor
// over the same memory, on the same device: hidden states cross in without a copy.
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

namespace posgeom::python {
namespace nb = nanobind;

struct TensorView {
  nb::ndarray<nb::ro> array;  // keeps the exporter's memory alive while the view is used
  at::Tensor tensor;          // borrows it: valid while `array` is
};

// InputError naming `what` for anything that is not a floating-point array.
TensorView tensorView(nb::handle value, const std::string& what);

}  // namespace posgeom::python
