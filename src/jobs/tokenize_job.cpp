#include "posgeom/jobs/tokenize_job.h"

#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/corpus/token_stream.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/io/output_file.h"

namespace posgeom::jobs {
using namespace corpus;
namespace {

std::filesystem::path tokenizerDir(const TokenizeJob& job) {
  if (!job.tokenizer.empty()) return job.tokenizer;
  if (job.model.empty()) throw InputError("tokenize", "give --model or --tokenizer");
  return hub::modelDirectory(job.model, job.revision, hub::ModelParts::kTokenizer, io::processEnv());
}

// What the run reads, which --out never replaces nor writes into: the corpus and the
// tokenizer's directory.
io::OutputFileRules outputRules(const TokenizeJob& job, const std::filesystem::path& tokenizer_dir) {
  io::OutputFileRules rules{option::kOut, job.force, {tokenizer_dir}};
  if (job.input != "-") rules.inputs.push_back(job.input);
  return rules;
}

// Calls emit(ids) for every block, framing each document when asked.
template <typename Emit>
void forEachBlock(TokenStream& stream, const tokenize::Framing& framing, bool add_special, Emit emit) {
  while (auto block = stream.next()) {
    if (add_special && block->document_start) emit(framing.prefix);
    emit(block->ids);
    if (add_special && block->document_end) emit(framing.suffix);
  }
}

}  // namespace

TokenizeSummary runTokenizeJob(const TokenizeJob& job) {
  if (job.format != "json" && job.format != "bin") throw InputError(option::kFormat, "'" + job.format + "' (use json or bin)");
  if (job.format == "bin" && job.out.empty()) throw InputError("--format bin", "needs --out FILE.bin");
  const auto sidecar_path = std::filesystem::path(job.out).replace_extension(".json");
  if (job.format == "bin" && sidecar_path == job.out)
    throw InputError(job.out.string(), "is also the name of its sidecar (" + sidecar_path.filename().string() +
                                           "); give --format bin's --out another extension, e.g. .bin");
  if (job.input != "-") corpus::corpusFiles(job.input);  // a missing corpus before any tokenizer download
  const auto tokenizer_dir = tokenizerDir(job);
  // Both files checked (and locked) before the corpus is read.
  std::optional<io::OutputFile> out, sidecar;
  if (!job.out.empty()) out.emplace(job.out, outputRules(job, tokenizer_dir));
  if (job.format == "bin") sidecar.emplace(sidecar_path, outputRules(job, tokenizer_dir));
  const auto tokenizer = tokenize::loadTokenizer(tokenizer_dir);
  auto stream = tokenizeDocuments(openDocuments(job.input, job.text), *tokenizer, job.input);
  TokenizeSummary summary;
  int64_t count = 0;

  if (job.format == "json") {
    auto write = [&](std::ostream& text) {
      text << '[';
      forEachBlock(*stream, tokenizer->framing(), job.add_special, [&](const std::vector<int32_t>& ids) {
        for (int32_t id : ids) text << (count++ ? "," : "") << id;
      });
      text << "]\n";
    };
    if (!out) {
      write(std::cout);
      std::cout.flush();
    } else {
      out->write(write);
    }
  } else {
    const bool wide = tokenizer->vocabSize() > 65536;
    summary.dtype = wide ? "uint32" : "uint16";
    out->write([&](std::ostream& bin) {
      forEachBlock(*stream, tokenizer->framing(), job.add_special, [&](const std::vector<int32_t>& ids) {
        for (int32_t id : ids) {
          if (wide) {
            const auto v = static_cast<uint32_t>(id);
            bin.write(reinterpret_cast<const char*>(&v), 4);
          } else {
            const auto v = static_cast<uint16_t>(id);
            bin.write(reinterpret_cast<const char*>(&v), 2);
          }
        }
        count += static_cast<int64_t>(ids.size());
      });
    });
    const nlohmann::json sidecar_json = {{"dtype", summary.dtype},
                                         {"tokenizer", tokenizer->describe()},
                                         {"vocab_size", tokenizer->vocabSize()},
                                         {"tokens", count},
                                         {"special_tokens_added", job.add_special}};
    sidecar->writeText(sidecar_json.dump(2) + "\n");
  }
  const auto s = stream->stats();
  summary.tokens = count;
  summary.documents = s.documents;
  summary.bytes = s.bytes;
  summary.invalid_utf8_replaced = s.invalid_utf8_replaced;
  return summary;
}

}  // namespace posgeom::jobs
