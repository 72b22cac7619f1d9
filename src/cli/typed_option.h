#pragma once
// An option whose text the library parses into a typed value at parse time: a bad value is
// a usage error naming the option, before any command runs.
#include <CLI/CLI.hpp>
#include <string>

#include "posgeom/base/error.h"
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

// --device and --dtype, as every command that runs a model takes them.
inline void addDeviceOptions(CLI::App* sub, runtime::DeviceSpec& device, runtime::ComputeDtype& dtype) {
  addTypedOption(sub, "--device", device, [](const std::string& s) { return runtime::parseDevice(s); },
                 "cpu, cuda or cuda:N (default cpu)");
  addTypedOption(sub, "--dtype", dtype, [](const std::string& s) { return runtime::parseComputeDtype(s); },
                 "compute dtype: float32, bfloat16 or float16 (default float32)");
}

}  // namespace posgeom::cli
