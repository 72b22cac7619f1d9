#include <memory>

#include "commands.h"
#include "posgeom/jobs/forward_job.h"
#include "typed_option.h"

namespace posgeom::cli {

void addForwardCommand(CLI::App& app, std::vector<Command>& commands) {
  auto job = std::make_shared<jobs::ForwardJob>();
  auto* r = &job->request;
  auto* sub = app.add_subcommand("forward", "run a model on token ids and write every hidden state");
  sub->add_option("--model", job->model, "model directory or Hugging Face hub name")->required();
  sub->add_option("--revision", job->revision, "of a hub name: branch, tag or commit in the local cache (default main)");
  auto* ids = sub->add_option("--ids", r->ids_path, "safetensors file with int64 input_ids [B,T]");
  auto random = std::make_shared<std::vector<int64_t>>();
  auto* random_ids = sub->add_option("--random-ids", *random, "instead of --ids: B,T uniformly random token ids")
                         ->delimiter(',')
                         ->expected(2);
  ids->excludes(random_ids);
  sub->add_option("--seed", r->seed, "seed for --random-ids")->capture_default_str();
  sub->add_option("--out", r->out_path, "output safetensors file")->required();
  sub->add_flag("--force", job->force, "replace --out if it exists (never one of the model's own files)");
  sub->add_flag("!--no-logits", r->logits, "leave the logits [B,T,vocab] out of --out: most of the file");
  addDeviceOptions(sub, r->device, r->dtype);
  sub->add_flag("--causal", r->causal, "causal mask for bidirectional models (BERT)");
  sub->add_flag("--final-norm", r->final_norm_last, "apply the final norm to the last hidden state, as HF does");
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
