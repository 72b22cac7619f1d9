#include <memory>

#include "commands.h"
#include "posgeom/model/forward_job.h"

namespace posgeom::cli {

void addForwardCommand(CLI::App& app, std::vector<Command>& commands) {
  auto job = std::make_shared<model::ForwardJob>();
  auto* sub = app.add_subcommand("forward", "run a model on token ids and write every hidden state");
  sub->add_option("--model", job->model, "model directory or Hugging Face hub name")->required();
  sub->add_option("--ids", job->ids_path, "safetensors file with int64 input_ids [B,T]")->required();
  sub->add_option("--out", job->out_path, "output safetensors file")->required();
  sub->add_option("--dtype", job->dtype, "compute dtype: float32, bfloat16 or float16")->capture_default_str();
  sub->add_option("--device", job->device, "cpu, cuda or cuda:N")->capture_default_str();
  sub->add_flag("--causal", job->causal, "causal mask for bidirectional models (BERT)");
  sub->add_flag("--final-norm", job->final_norm_last, "apply the final norm to the last hidden state, as HF does");
  commands.push_back({sub, [job] { model::runForwardJob(*job); }});
}

}  // namespace posgeom::cli
