#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/train/addition_eval.h"
#include "posgeom/train/trainer.h"
#include "typed_option.h"

namespace posgeom::cli {

void addTrainCommands(CLI::App& app, std::vector<Command>& commands) {
  struct TrainArgs {
    std::filesystem::path config;
    std::filesystem::path out;
    train::TrainOptions options;
    int64_t iterations = 0;
    int64_t save_every = -1;  // -1: the config's run.save_every
  };
  auto t = std::make_shared<TrainArgs>();
  auto* sub = app.add_subcommand("train", "train a GPT-2-architecture model (configs/train/) and write it in Hugging Face layout");
  sub->add_option("--config", t->config, "training config (TOML or JSON): [model], [data], [optim], [run]")->required();
  sub->add_option("--out", t->out, "output directory (default: the config's run.out)");
  sub->add_option("--iterations", t->iterations, "override optim.iterations (e.g. to extend a run with --resume)");
  sub->add_option("--save-every", t->save_every,
                  "also keep the model at steps N, 2N, ... in <out>/step_<k>/ (overrides run.save_every; 0: off)")
      ->check(atLeast(0));
  sub->add_flag("--resume", t->options.resume, "continue from <out>/checkpoint.safetensors");
  sub->add_option("--stop-after", t->options.stop_after, "stop after this many steps (checkpointed; resume continues the same run)");
  sub->add_option("--device", t->options.device, "cpu, cuda or cuda:N")->capture_default_str();
  commands.push_back({sub, [t] {
                        auto config = train::readTrainConfig(t->config);
                        if (!t->out.empty()) config.run.out = t->out;
                        if (t->iterations > 0) config.optim.iterations = t->iterations;
                        if (t->save_every >= 0) config.run.save_every = t->save_every;
                        const auto log = train::runTraining(config, t->options);
                        std::cout << "trained " << log.size() << " steps into " << config.run.out.string()
                                  << " (final validation loss " << log.back().validation_loss << ")\n";
                      }});
  commands.back().runs_model = true;

  struct EvalArgs {
    std::filesystem::path model;
    int64_t max_digits = 12;
    int64_t samples = 200;
    uint64_t seed = 7;
    std::string device = "cpu";
    std::filesystem::path out;
  };
  auto e = std::make_shared<EvalArgs>();
  auto* eval = app.add_subcommand("eval-addition", "exact-match accuracy of an addition model by operand length");
  eval->add_option("--model", e->model, "model trained with [data] task = \"addition\"")->required();
  eval->add_option("--max-digits", e->max_digits, "evaluate operand lengths 1..N (beyond training too)")->capture_default_str();
  eval->add_option("--samples", e->samples, "problems per length")->capture_default_str();
  eval->add_option("--seed", e->seed)->capture_default_str();
  eval->add_option("--device", e->device)->capture_default_str();
  eval->add_option("--out", e->out, "also write the table as CSV here");
  commands.push_back({eval, [e] {
                        const auto rows = train::evaluateAddition(e->model, e->max_digits, e->samples, e->seed, e->device);
                        std::cout << train::additionTable(rows);
                        if (!e->out.empty()) io::writeTextFileAtomically(e->out, train::additionCsv(rows));
                      }});
  commands.back().runs_model = true;
}

}  // namespace posgeom::cli
