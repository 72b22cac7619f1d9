#pragma once
// Keyword arguments of posgeom.analyze and posgeom.Windows as the options `posgeom analyze`
// takes: the same names with '_' for '-', judged by the same code (InputError, raised as
// ValueError, naming the keyword or the CLI option).
#include <nanobind/nanobind.h>

#include "posgeom/pass/options.h"

namespace posgeom::python {
namespace nb = nanobind;

// `allowed_extra`: keywords the caller handles itself (out, force), left out of the result.
pass::AnalyzeOptions analyzeOptionsOf(const nb::kwargs& kwargs, std::initializer_list<const char*> allowed_extra = {});

}  // namespace posgeom::python
