#include "posgeom/jobs/inspect_job.h"

#include <map>
#include <sstream>

#include "posgeom/base/byte_size.h"
#include "posgeom/model/load/checkpoint_source.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/tensor_resolver.h"

namespace posgeom::jobs {
using namespace model;  // the checkpoint readers
namespace fs = std::filesystem;

nlohmann::json inspectModel(const std::string& model, const std::string& revision) {
  const fs::path dir = hub::modelDirectory(model, revision, hub::ModelParts::kWeights, io::processEnv());
  const auto config = loadModelConfig(dir);
  const auto& arch = architectureFor(config.model_type, config.source.string());
  const auto checkpoint = openCheckpoint(dir);
  const auto resolved = resolveTensors(checkpoint, arch, config);

  int64_t parameters = 0;
  double active_parameters = 0;  // a token's: of a mixture's experts, the share its router picks
  std::map<std::string, int64_t> dtype_counts;
  std::map<int64_t, std::pair<int64_t, int64_t>> per_block;  // block (-1: outside) -> parameters, stored bytes
  bool has_lm_head = false;
  for (const auto& t : resolved) {
    parameters += t.view->numel();
    active_parameters += static_cast<double>(t.view->numel()) * t.spec.active_share;
    auto& [block_parameters, block_bytes] = per_block[t.spec.block];
    block_parameters += t.view->numel();
    block_bytes += static_cast<int64_t>(t.view->nbytes);
    dtype_counts[std::string(io::dtypeName(t.view->dtype))] += t.view->numel();
    has_lm_head = has_lm_head || t.spec.name == "lm_head.weight";
  }
  // What a layer-major pass holds of the weights at a time: the largest block (as stored),
  // beside what lies outside the blocks (embeddings, final norm, head).
  int64_t largest = -1;
  for (const auto& [block, sizes] : per_block)
    if (block >= 0 && (largest < 0 || sizes.second > per_block[largest].second)) largest = block;
  const auto blockSizes = [&](int64_t block) {
    const auto [block_parameters, block_bytes] = per_block[block];
    return nlohmann::json{{"parameters", block_parameters}, {"bytes", block_bytes}};
  };
  auto largest_block = blockSizes(largest);
  largest_block["block"] = largest;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& file : checkpoint.files()) files.push_back(file.filename().string());
  nlohmann::json tokenizer = nlohmann::json::array();
  for (const char* name : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json",
                           "merges.txt", "vocab.txt", "tokenizer.model"})
    if (fs::exists(dir / name)) tokenizer.push_back(name);

  nlohmann::json info = {{"directory", dir.string()},
          {"model_type", config.model_type},
          {"family", arch.family},
          {"layers", config.num_layers},
          {"hidden_size", config.hidden_size},
          {"heads", config.num_heads},
          {"kv_heads", config.num_kv_heads},
          {"head_dim", config.headDim()},
          {"intermediate_size", config.intermediate_size},
          {"vocab_size", config.vocab_size},
          {"max_positions", config.max_positions},
          {"positional_scheme", describePositions(config)},
          {"attention", config.bidirectional ? "bidirectional" : "causal"},
          {"parameters", parameters},
          {"largest_block", largest_block},
          {"outside_blocks", blockSizes(-1)},
          {"stored_dtypes", dtype_counts},
          {"declared_dtype", config.stored_dtype},
          {"lm_head", has_lm_head ? "separate" : (config.tie_word_embeddings ? "tied" : "none")},
          {"weight_files", files},
          {"tokenizer_files", tokenizer}};
  if (config.moe.experts > 0) {
    int64_t sparse_blocks = 0;
    for (int64_t b = 0; b < config.num_layers; ++b) sparse_blocks += config.moe.sparse(b) ? 1 : 0;
    info["experts"] = {{"experts", config.moe.experts},
                       {"per_token", config.moe.experts_per_token},
                       {"expert_size", config.moe.expert_size},
                       {"shared_expert_size", config.moe.shared_expert_size},
                       {"sparse_blocks", sparse_blocks},
                       {"active_parameters", static_cast<int64_t>(active_parameters)}};
  }
  if (config.latent.any()) {
    const auto& a = config.latent;
    info["latent_attention"] = {{"q_rank", a.q_rank}, {"kv_rank", a.kv_rank}, {"nope_dims", a.nope_dims},
                                {"rope_dims", a.rope_dims}, {"value_dims", a.value_dims}};
  }
  return info;
}

std::string formatInspection(const nlohmann::json& info) {
  std::ostringstream out;
  auto row = [&](const char* label, const nlohmann::json& v) {
    out << "  " << label << std::string(20 - std::min<size_t>(19, std::string(label).size()), ' ')
        << (v.is_string() ? v.get<std::string>() : v.dump()) << "\n";
  };
  out << info["family"].get<std::string>() << " model at " << info["directory"].get<std::string>() << "\n";
  row("model_type", info["model_type"]);
  row("layers", info["layers"]);
  row("hidden size", info["hidden_size"]);
  row("heads", std::to_string(info["heads"].get<int64_t>()) + " (" + std::to_string(info["kv_heads"].get<int64_t>()) +
                   " key/value, head dim " + std::to_string(info["head_dim"].get<int64_t>()) + ")");
  row("MLP width", info["intermediate_size"]);
  row("vocabulary", info["vocab_size"]);
  row("positions", info["positional_scheme"].get<std::string>() +
                       (info["max_positions"].get<int64_t>() > 0
                            ? ", max " + std::to_string(info["max_positions"].get<int64_t>())
                            : ", no fixed maximum"));
  row("attention", info["attention"]);
  row("parameters", info["parameters"]);
  if (info.contains("experts")) {
    const auto& e = info["experts"];
    const auto shared = e["shared_expert_size"].get<int64_t>();
    row("experts", e["experts"].dump() + " in each of " + e["sparse_blocks"].dump() + " blocks, " + e["per_token"].dump() +
                       " a token, " + e["expert_size"].dump() + " wide" +
                       (shared > 0 ? " (and a shared expert " + std::to_string(shared) + " wide)" : "") + "; " +
                       e["active_parameters"].dump() + " parameters active a token");
  }
  if (info.contains("latent_attention")) {
    const auto& a = info["latent_attention"];
    const auto q_rank = a["q_rank"].get<int64_t>();
    row("latent attention", (q_rank > 0 ? "queries through a latent of " + std::to_string(q_rank) + ", " : std::string()) +
                                "keys and values through one of " + a["kv_rank"].dump() + "; each head's key " +
                                a["nope_dims"].dump() + " dims from it and " + a["rope_dims"].dump() +
                                " rotary ones shared by every head, its value " + a["value_dims"].dump());
  }
  const auto& block = info["largest_block"];
  row("largest block", "block " + block["block"].dump() + ": " + block["parameters"].dump() + " parameters, " +
                           formatBytes(block["bytes"].get<int64_t>()) + " stored (outside the blocks: " +
                           formatBytes(info["outside_blocks"]["bytes"].get<int64_t>()) + ")");
  row("stored dtypes", info["stored_dtypes"]);
  row("LM head", info["lm_head"]);
  row("weight files", info["weight_files"]);
  row("tokenizer files", info["tokenizer_files"].empty() ? nlohmann::json("none") : info["tokenizer_files"]);
  return out.str();
}

}  // namespace posgeom::jobs
