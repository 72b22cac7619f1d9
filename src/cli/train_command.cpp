#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "posgeom/io/output_file.h"
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
  sub->add_option("--out", t->out,
                  "output directory (default: the config's run.out); absent or empty, unless --force or --resume");
  sub->add_option("--iterations", t->iterations, "override optim.iterations (e.g. to extend a run with --resume)")->check(atLeast(1));
  sub->add_option("--save-every", t->save_every,
                  "also keep the model at steps N, 2N, ... in <out>/step_<k>/ (overrides run.save_every; 0: off)")
      ->check(atLeast(0));
  sub->add_flag("--resume", t->options.resume, "continue from <out>/checkpoint.safetensors");
  sub->add_flag("--force", t->options.force,
                "replace the training run in --out (a directory holding anything else is never replaced)");
  sub->add_option("--stop-after", t->options.stop_after, "stop after this many steps (checkpointed; resume continues the same run)")
      ->check(atLeast(0));
  sub->add_option("--device", t->options.device, "cpu, cuda or cuda:N")->capture_default_str();
  commands.push_back({sub, [t] {
                        auto config = train::readTrainConfig(t->config);
                        if (!t->out.empty()) config.run.out = t->out;
                        if (t->iterations > 0) config.optim.iterations = t->iterations;
                        if (t->save_every >= 0) config.run.save_every = t->save_every;
                        const auto log = train::runTraining(config, t->options);
                        std::cout << "trained " << log.size() << " steps into " << config.run.out.string();
                        if (const auto loss = train::lastValidationLoss(log))
                          std::cout << " (final validation loss " << *loss << ")\n";
                        else
                          std::cout << " (not evaluated yet: the first evaluation is at step "
                                    << std::min(config.run.eval_interval, config.optim.iterations) << ")\n";
                      }});
  commands.back().runs_model = true;

  struct EvalArgs {
    std::filesystem::path model;
    int64_t max_digits = 12;
    int64_t samples = 200;
    uint64_t seed = 7;
    std::string device = "cpu";
    std::filesystem::path out;
    bool force = false;
  };
  auto e = std::make_shared<EvalArgs>();
  auto* eval = app.add_subcommand("eval-addition", "exact-match accuracy of an addition model by operand length");
  eval->add_option("--model", e->model, "model trained with [data] task = \"addition\"")->required();
  eval->add_option("--max-digits", e->max_digits, "evaluate operand lengths 1..N (beyond training too)")->capture_default_str();
  eval->add_option("--samples", e->samples, "problems per length")->capture_default_str();
  eval->add_option("--seed", e->seed)->capture_default_str();
  eval->add_option("--device", e->device)->capture_default_str();
  eval->add_option("--out", e->out, "also write the table as CSV here");
  eval->add_flag("--force", e->force, "replace --out if it exists");
  commands.push_back({eval, [e] {
                        // --out checked (and locked) before the evaluation runs.
                        std::optional<io::OutputFile> out;
                        if (!e->out.empty()) out.emplace(e->out, io::OutputFileRules{"--out", e->force, {e->model}});
                        const auto rows = train::evaluateAddition(e->model, e->max_digits, e->samples, e->seed, e->device);
                        std::cout << train::additionTable(rows);
                        if (out) out->writeText(train::additionCsv(rows));
                      }});
  commands.back().runs_model = true;
}

}  // namespace posgeom::cli
