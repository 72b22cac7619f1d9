#pragma once
// One function per binding file, each adding its classes and functions to posgeom._core.
#include <nanobind/nanobind.h>

namespace posgeom::python {
namespace nb = nanobind;

void bindState(nb::module_& m);        // State, load, merge
void bindAccumulator(nb::module_& m);  // Accumulator
void bindResults(nb::module_& m);      // Results, metrics, report
void bindWindows(nb::module_& m);      // Windows, WindowBatch
void bindAnalyze(nb::module_& m);      // analyze
void bindHeads(nb::module_& m);        // heads

}  // namespace posgeom::python
