#include <iostream>
#include <memory>

#include "commands.h"
#include "posgeom/jobs/bench_job.h"

#include "posgeom/base/option_names.h"
#include "typed_option.h"

namespace posgeom::cli {

void addBenchCommand(CLI::App& app, std::vector<Command>& commands) {
  auto job = std::make_shared<jobs::BenchJob>();
  auto* sub = app.add_subcommand(
      "bench", "measure the forward pass and analyze against the machine's matrix-multiply throughput");
  sub->add_option(option::kShape, job->shapes,
                  "random models to write and measure: gpt2-small, llama-small, llama-1b, llama2-7b, llama2-7b-2l "
                  "(default gpt2-small and llama-small; llama-1b instead on CUDA)")
      ->delimiter(',');
  sub->add_option(option::kModel, job->models, "measure these checkpoints instead of random shapes")->delimiter(',');
  sub->add_option(option::kSeqLen, job->seq_len, "tokens per window")->capture_default_str();
  sub->add_option(option::kBatchSize, job->batch_size, "windows per forward pass (0: chosen for the device)")
      ->capture_default_str();
  sub->add_option(option::kRounds, job->rounds, "timed rounds of forward, analyze and analyze --heads (the result is their median)")->capture_default_str();
  addDeviceOptions(sub, job->device, job->dtype);
  sub->add_option(option::kWorkDir, job->work_dir, "keep the random checkpoints here and reuse them (default: temporary)");
  sub->add_option(option::kOut, job->out, "also write the numbers as JSON");
  sub->add_flag(option::kForce, job->force, "replace an existing --out file");
  sub->add_flag(option::kLayerMajor, job->layer_major, "also measure analyze --layer-major against the resident pass");
  sub->add_option(option::kWave, job->wave, "with --layer-major: the wave's windows (default: four batches)");
  commands.push_back({sub, [job] { std::cout << jobs::benchTable(jobs::runBench(*job)) << std::flush; }});
  commands.back().runs_model = true;
}

}  // namespace posgeom::cli
