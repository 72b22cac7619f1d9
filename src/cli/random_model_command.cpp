#include <memory>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "posgeom/io/path_lock.h"
#include "posgeom/base/option_names.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/random_checkpoint.h"

namespace posgeom::cli {

void addRandomModelCommand(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    model::RandomCheckpointSpec spec;
    std::string out;
    bool force = false;
  };
  auto opt = std::make_shared<Options>();
  auto& s = opt->spec;
  auto* sub = app.add_subcommand("random-model", "write a randomly initialised checkpoint in Hugging Face layout");
  std::string types;
  for (const auto& t : model::supportedModelTypes()) types += (types.empty() ? "" : ", ") + t;
  sub->add_option(option::kArch, s.model_type, "model_type: " + types)->capture_default_str();
  sub->add_option(option::kLayers, s.layers)->capture_default_str();
  sub->add_option(option::kDim, s.hidden_size, "hidden size")->capture_default_str();
  sub->add_option(option::kHeads, s.heads)->capture_default_str();
  sub->add_option(option::kKvHeads, s.kv_heads, "key/value heads (llama; 0: = heads)")->capture_default_str();
  sub->add_option(option::kMlp, s.intermediate_size, "MLP width (0: 4 x dim)")->capture_default_str();
  sub->add_option(option::kVocab, s.vocab_size)->capture_default_str();
  sub->add_option(option::kPositions, s.max_positions, "maximum positions")->capture_default_str();
  sub->add_option(option::kSeed, s.seed)->capture_default_str();
  sub->add_option(option::kOut, opt->out, "output directory")->required();
  sub->add_flag(option::kForce, opt->force, "replace a random model already in --out");
  commands.push_back({sub, [opt] {
                        const io::PathLock lock(opt->out);
                        model::checkRandomCheckpointOut(opt->out, opt->force);
                        model::writeRandomCheckpoint(opt->spec, opt->out);
                        spdlog::info("wrote a random {} checkpoint to {}", opt->spec.model_type, opt->out);
                      }});
}

}  // namespace posgeom::cli
