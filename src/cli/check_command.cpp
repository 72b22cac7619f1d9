#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/report/check.h"

namespace posgeom::cli {

void addCheckCommand(CLI::App& app, std::vector<Command>& commands, int& exit_code) {
  struct Options {
    std::string report;
    std::string reference;
    report::CheckOptions check;
    std::vector<std::string> per_key;
    bool all = false;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("check", "compare a report's numbers with reference numbers (exit 1 on a regression)");
  sub->add_option("report", opt->report, "report directory or its summary.json")->required();
  sub->add_option("--reference", opt->reference, "reference JSON: any subset of summary.json")->required();
  sub->add_option("--rtol", opt->check.tolerance.rtol, "relative tolerance for floats")->capture_default_str();
  sub->add_option("--atol", opt->check.tolerance.atol, "absolute tolerance for floats")->capture_default_str();
  sub->add_option("--tolerance", opt->per_key, "per-key override KEY=RTOL[,ATOL], e.g. relative_norm=1e-3");
  sub->add_flag("--all", opt->all, "list every number, not only the ones that moved");
  commands.push_back({sub, [opt, &exit_code] {
                        for (const auto& spec : opt->per_key) {
                          const auto eq = spec.find('=');
                          if (eq == std::string::npos) throw InputError("--tolerance", "'" + spec + "' is not KEY=RTOL[,ATOL]");
                          report::Tolerance t = opt->check.tolerance;
                          const auto comma = spec.find(',', eq);
                          try {
                            t.rtol = std::stod(spec.substr(eq + 1, comma - eq - 1));
                            if (comma != std::string::npos) t.atol = std::stod(spec.substr(comma + 1));
                          } catch (const std::exception&) {
                            throw InputError("--tolerance", "'" + spec + "' is not KEY=RTOL[,ATOL]");
                          }
                          opt->check.per_key[spec.substr(0, eq)] = t;
                        }
                        std::filesystem::path summary = opt->report;
                        if (std::filesystem::is_directory(summary)) summary /= "summary.json";
                        const auto rows = report::checkAgainstReference(io::readJsonFile(summary),
                                                                        io::readJsonFile(opt->reference), opt->check);
                        if (rows.empty()) throw InputError(opt->reference, "holds no numbers to check");
                        std::cout << report::formatCheck(rows, opt->all);
                        for (const auto& r : rows)
                          if (!r.ok) exit_code = 1;
                      }});
}

}  // namespace posgeom::cli
