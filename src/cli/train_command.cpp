#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/jobs/eval_addition_job.h"
#include "posgeom/base/option_names.h"
#include "posgeom/jobs/train_job.h"
#include "typed_option.h"

namespace posgeom::cli {
namespace {

// --device alone: training and the evaluation run in float32.
void addDeviceOption(CLI::App* sub, runtime::DeviceSpec& device) {
  addTypedOption(sub, option::kDevice, device, [](const std::string& s) { return runtime::parseDevice(s); },
                 "cpu, cuda or cuda:N (default cpu)");
}

}  // namespace

void addTrainCommands(CLI::App& app, std::vector<Command>& commands) {
  auto t = std::make_shared<jobs::TrainJob>();
  auto* sub = app.add_subcommand("train", "train a GPT-2-architecture model (configs/train/) and write it in Hugging Face layout");
  sub->add_option(option::kConfig, t->config, "training config (TOML or JSON): [model], [data], [optim], [run]")->required();
  sub->add_option(option::kOut, t->out,
                  "output directory (default: the config's run.out); absent or empty, unless --force or --resume");
  sub->add_option(option::kIterations, t->iterations, "override optim.iterations (e.g. to extend a run with --resume)")->check(atLeast(1));
  sub->add_option(option::kSaveEvery, t->save_every,
                  "also keep the model at steps N, 2N, ... in <out>/step_<k>/ (overrides run.save_every; 0: off)")
      ->check(atLeast(0));
  sub->add_flag(option::kResume, t->options.resume, "continue from <out>/checkpoint.safetensors");
  sub->add_flag(option::kForce, t->options.force,
                "replace the training run in --out (a directory holding anything else is never replaced)");
  sub->add_option(option::kStopAfter, t->options.stop_after, "stop after this many steps (checkpointed; resume continues the same run)")
      ->check(atLeast(0));
  addDeviceOption(sub, t->options.device);
  commands.push_back({sub, [t] { jobs::runTrainJob(*t, std::cout); }});
  commands.back().runs_model = true;

  auto e = std::make_shared<jobs::EvalAdditionJob>();
  auto* eval = app.add_subcommand("eval-addition", "exact-match accuracy of an addition model by operand length");
  eval->add_option(option::kModel, e->model, "model trained with [data] task = \"addition\"")->required();
  eval->add_option(option::kMaxDigits, e->max_digits, "evaluate operand lengths 1..N (beyond training too)")->capture_default_str();
  eval->add_option(option::kSamples, e->samples, "problems per length")->capture_default_str();
  eval->add_option(option::kSeed, e->seed)->capture_default_str();
  addDeviceOption(eval, e->device);
  eval->add_option(option::kOut, e->out, "also write the table as CSV here");
  eval->add_flag(option::kForce, e->force, "replace --out if it exists");
  commands.push_back({eval, [e] { jobs::runEvalAdditionJob(*e, std::cout); }});
  commands.back().runs_model = true;
}

}  // namespace posgeom::cli
