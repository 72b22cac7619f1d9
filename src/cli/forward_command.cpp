#include <memory>

#include "commands.h"
#include "posgeom/jobs/forward_job.h"

#include "posgeom/base/option_names.h"
#include "typed_option.h"

namespace posgeom::cli {

void addForwardCommand(CLI::App& app, std::vector<Command>& commands) {
  auto job = std::make_shared<jobs::ForwardJob>();
  auto* r = &job->request;
  auto* sub = app.add_subcommand("forward", "run a model on token ids and write every hidden state");
  sub->add_option(option::kModel, job->model, "model directory or Hugging Face hub name")->required();
  sub->add_option(option::kRevision, job->revision, "of a hub name: branch, tag or commit (default main), from the Hugging Face cache or the hub");
  auto* ids = sub->add_option(option::kIds, r->ids_path, "safetensors file with int64 input_ids [B,T]");
  auto random = std::make_shared<std::vector<int64_t>>();
  auto* random_ids = sub->add_option(option::kRandomIds, *random, "instead of --ids: B,T uniformly random token ids")
                         ->delimiter(',')
                         ->expected(2);
  ids->excludes(random_ids);
  sub->add_option(option::kSeed, r->seed, "seed for --random-ids")->capture_default_str();
  sub->add_option(option::kOut, r->out_path, "output safetensors file")->required();
  sub->add_flag(option::kForce, job->force, "replace --out if it exists (never one of the model's own files)");
  sub->add_flag("!--no-logits", r->logits, "leave the logits [B,T,vocab] out of --out: most of the file");
  addDeviceOptions(sub, r->device, r->dtype);
  sub->add_flag(option::kCausal, r->causal, "causal mask for bidirectional models (BERT)");
  sub->add_flag(option::kFinalNorm, r->final_norm_last, "apply the final norm to the last hidden state, as HF does");
  sub->callback([ids, random_ids] {
    if (ids->count() + random_ids->count() == 0) throw CLI::RequiredError("--ids or --random-ids");
  });
  commands.push_back({sub, [job, random] {
                        if (random->size() == 2) {  // checked against the model by the job
                          job->request.random_batch = (*random)[0];
                          job->request.random_len = (*random)[1];
                        }
                        jobs::runForwardJob(*job);
                      }});
  commands.back().runs_model = true;
}

}  // namespace posgeom::cli
