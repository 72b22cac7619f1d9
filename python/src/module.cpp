// posgeom._core: the library's analysis for Python, no second implementation. Bad input is
// the library's InputError, raised as ValueError with the same one-line message.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <regex>
#include <string>

#include "bindings.h"
#include "posgeom/base/error.h"
#include "posgeom/base/log.h"

namespace {

// The library's messages name the CLI's options; from Python they name the keywords:
// "--seq-len" reads "seq_len", "--force" reads "force=True".
std::string pythonSpelling(const std::string& message) {
  static const std::regex force("--force\\b"), option("--([a-z][a-z0-9]*(-[a-z0-9]+)*)");
  std::string text = std::regex_replace(message, force, "force=True");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), option);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out += text.substr(last, static_cast<std::size_t>(it->position()) - last);
    std::string name = (*it)[1];
    for (auto& c : name)
      if (c == '-') c = '_';
    out += name;
    last = static_cast<std::size_t>(it->position() + it->length());
  }
  return out + text.substr(last);
}

}  // namespace

NB_MODULE(_core, m) {
  namespace nb = nanobind;
  m.attr("__version__") = POSGEOM_VERSION;
  // The torch this extension was built against: its LibTorch must be the one imported.
  m.def("built_with_torch", [] { return std::string(POSGEOM_TORCH_BUILT_WITH); },
        "The torch version the extension was built against (torch.__version__ must equal it).");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const posgeom::InputError& e) {
      PyErr_SetString(PyExc_ValueError, pythonSpelling(e.what()).c_str());
    } catch (const posgeom::RunStopped& e) {  // Ctrl-C (SIGINT) or SIGTERM during analyze's pass
      PyErr_SetString(PyExc_KeyboardInterrupt, pythonSpelling(e.what()).c_str());
    }
  });
  // posgeom's log (spdlog's default logger): warnings and errors only, unless asked;
  // a notebook has no use for the CLI's progress lines.
  posgeom::log::setLevel("warning");
  m.def(
      "set_log_level",
      [](const std::string& level) {
        if (!posgeom::log::setLevel(level))
          throw posgeom::InputError("level", "'" + level + "' is not a log level (trace, debug, info, warning, error, off)");
      },
      nb::arg("level"), "posgeom's own log lines, on standard error: 'warning' (the default), 'info' (the CLI's progress), 'debug', 'off'.");
  posgeom::python::bindState(m);
  posgeom::python::bindAccumulator(m);
  posgeom::python::bindResults(m);
  posgeom::python::bindWindows(m);
  posgeom::python::bindAnalyze(m);
  posgeom::python::bindHeads(m);
}
