#pragma once
// An option whose text the library parses into a typed value at parse time: a bad value is
// a usage error naming the option, before any command runs.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/runtime/device.h"

namespace posgeom::cli {

template <typename T, typename Parse>
CLI::Option* addTypedOption(CLI::App* sub, const std::string& name, T& target, Parse parse, const std::string& description) {
  return sub->add_option_function<std::string>(
      name,
      [&target, parse](const std::string& text) {
        try {
          target = parse(text);
        } catch (const InputError& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      description);
}

// A whole number of at least `lo`, checked at parse time: "--seq-len: must be a whole
// number >= 1 (got 0)". A value that the option leaves at its default is not given.
inline CLI::Validator atLeast(long long lo) {
  return CLI::Validator(
      [lo](std::string& text) -> std::string {
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || v < lo)
          return "must be a whole number >= " + std::to_string(lo) + " (got " + text + ")";
        return "";
      },
      "INT>=" + std::to_string(lo));
}

// --device and --dtype, as every command that runs a model takes them.
inline void addDeviceOptions(CLI::App* sub, runtime::DeviceSpec& device, runtime::ComputeDtype& dtype) {
  addTypedOption(sub, option::kDevice, device, [](const std::string& s) { return runtime::parseDevice(s); },
                 "cpu, cuda or cuda:N (default cpu)");
  addTypedOption(sub, option::kDtype, dtype, [](const std::string& s) { return runtime::parseComputeDtype(s); },
                 "compute dtype: float32, bfloat16, float16 or float64 (the exact reference; default float32)");
}

}  // namespace posgeom::cli
