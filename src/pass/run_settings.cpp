#include "posgeom/pass/run_settings.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "posgeom/corpus/document_reader.h"
#include "posgeom/io/fingerprint.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/pass/heads_stage.h"
#include "posgeom/runtime/threads.h"

namespace posgeom::pass {
namespace fs = std::filesystem;

nlohmann::json runSettings(const AnalyzeOptions& o, const PassPlan& plan, const tokenize::Tokenizer* tokenizer) {
  nlohmann::json s = {{"tool", "posgeom"},
                      {"source", "model"},
                      {"model", plan.model_dir.string()},
                      {"model_type", plan.config.model_type},
                      {"corpus", o.corpus.path},
                      {"tokenizer", tokenizer ? tokenizer->describe() : std::string("none (ids)")},
                      {"seq_len", plan.pass.seq_len},
                      {"skip_first", o.skip_first},
                      {"num_seqs", o.num_seqs},
                      {"batch_size", o.batch_size},
                      {"device", o.device.str()},
                      {"dtype", runtime::computeDtypeName(o.dtype)},
                      {"sampling", samplingName(o.sampling)},
                      {"seed", o.seed},
                      {"cross_documents", o.cross_documents},
                      {"windows_per_document", o.windows_per_document},
                      {"special_tokens", o.special_tokens && tokenizer != nullptr},
                      {"causal", plan.causal},
                      {"layer_selection", plan.pass.accumulator.layers},
                      {"second_moment", o.second_moment},
                      {"layer_cosines", o.layer_cosines},
                      {"context_cap", o.caps.contexts},
                      {"dim", plan.config.hidden_size}};
  s["shard"] = plan.shard.str();
  // What ran where the options left it to posgeom (--batch-size 0, --threads 0): beside the
  // requested values, not instead of them, and not part of the run's identity.
  s["effective"] = {{"batch_size", plan.pass.batch_size}, {"threads", runtime::intraOpThreads()}};
  // --layer-cosines asked, and not measured where the plan went layer-major itself.
  if (o.layer_cosines) s["effective"]["layer_cosines"] = plan.pass.accumulator.layer_cosines;
  // Identity by content, not path: resume and merge compare these, never "model"/"corpus".
  s["model_fingerprint"] = io::modelFingerprint(plan.model_dir);
  // Files only: a stream (stdin, a FIFO) cannot be read twice; its tokens' hash is checked
  // on resume instead.
  if (!corpus::isGenerated(o.corpus.path) && o.corpus.path != "-") {
    std::vector<fs::path> files;
    for (const auto& f : corpus::corpusFiles(o.corpus.path)) files.emplace_back(f);
    if (std::all_of(files.begin(), files.end(), [](const fs::path& f) { return fs::is_regular_file(f); }))
      s["corpus_fingerprint"] = io::fingerprintFiles(files);
  }
  if (plan.heads) s["head_options"] = headSettingsJson(*plan.heads, o.caps.attention_samples);
  // A hub snapshot's commit (what --revision resolved to, or main's): states of another
  // revision do not resume.
  if (const auto commit = io::snapshotCommit(plan.model_dir); !commit.empty()) s["model_commit"] = commit;
  return s;
}

}  // namespace posgeom::pass
