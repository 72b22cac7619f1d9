#include <memory>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "posgeom/jobs/tokenize_job.h"

#include "posgeom/base/option_names.h"

namespace posgeom::cli {

void addTokenizeCommand(CLI::App& app, std::vector<Command>& commands) {
  auto job = std::make_shared<jobs::TokenizeJob>();
  auto* sub = app.add_subcommand("tokenize", "turn a text corpus into token ids with a model's tokenizer");
  auto* model = sub->add_option(option::kModel, job->model, "model directory or hub name whose tokenizer to use");
  sub->add_option(option::kRevision, job->revision, "of a hub name: branch, tag or commit (default main), from the Hugging Face cache or the hub");
  auto* tok = sub->add_option(option::kTokenizer, job->tokenizer, "tokenizer directory (instead of --model)");
  model->excludes(tok);
  sub->add_option(option::kInput, job->input, "text file, directory, JSON Lines, '-' for stdin (gzip/zstd too)")->required();
  sub->add_option(option::kFormat, job->format, "json (one array) or bin (uint16/uint32 + sidecar .json)")
      ->check(CLI::IsMember({"json", "bin"}))
      ->capture_default_str();
  sub->add_option(option::kOut, job->out, "output file (default for json: stdout)");
  sub->add_flag(option::kForce, job->force, "replace --out (and its sidecar) if it exists");
  sub->add_flag(option::kAddSpecial, job->add_special, "add the tokenizer's special tokens around each document");
  sub->add_option(option::kTextField, job->text.text_field, "JSON Lines field holding the text")->capture_default_str();
  sub->add_option(option::kLabelField, job->text.label_field, "JSON Lines field holding the document label");
  sub->add_flag(option::kStrict, job->text.strict, "fail on a malformed JSON Lines row instead of skipping it");
  sub->callback([model, tok] {
    if (model->count() + tok->count() == 0) throw CLI::RequiredError("--model or --tokenizer");
  });
  commands.push_back({sub, [job] {
                        const auto s = jobs::runTokenizeJob(*job);
                        spdlog::info("{} tokens from {} documents ({} bytes){}", s.tokens, s.documents, s.bytes,
                                     s.invalid_utf8_replaced
                                         ? fmt::format("; {} invalid UTF-8 sequences replaced", s.invalid_utf8_replaced)
                                         : std::string());
                      }});
}

}  // namespace posgeom::cli
