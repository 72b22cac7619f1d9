#include "posgeom/jobs/tokenize_job.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "posgeom/base/error.h"
#include "posgeom/corpus/token_stream.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/hub_cache.h"

namespace posgeom::jobs {
using namespace corpus;
namespace {

std::unique_ptr<tokenize::Tokenizer> tokenizerFor(const TokenizeJob& job) {
  if (!job.tokenizer.empty()) return tokenize::loadTokenizer(job.tokenizer);
  if (job.model.empty()) throw InputError("tokenize", "give --model or --tokenizer");
  return tokenize::loadTokenizer(io::resolveModelDir(job.model, io::processEnv()));
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
  if (job.format != "json" && job.format != "bin") throw InputError("--format", "'" + job.format + "' (use json or bin)");
  if (job.format == "bin" && job.out.empty()) throw InputError("--format bin", "needs --out FILE.bin");
  const auto tokenizer = tokenizerFor(job);
  auto stream = tokenizeDocuments(openDocuments(job.input, job.text), *tokenizer, job.input);
  TokenizeSummary summary;
  int64_t count = 0;

  if (job.format == "json") {
    auto write = [&](std::ostream& out) {
      out << '[';
      forEachBlock(*stream, tokenizer->framing(), job.add_special, [&](const std::vector<int32_t>& ids) {
        for (int32_t id : ids) out << (count++ ? "," : "") << id;
      });
      out << "]\n";
    };
    if (job.out.empty()) {
      write(std::cout);
      std::cout.flush();
    } else {
      io::writeFileAtomically(job.out, write);
    }
  } else {
    const bool wide = tokenizer->vocabSize() > 65536;
    summary.dtype = wide ? "uint32" : "uint16";
    io::writeFileAtomically(job.out, [&](std::ostream& out) {
      forEachBlock(*stream, tokenizer->framing(), job.add_special, [&](const std::vector<int32_t>& ids) {
        for (int32_t id : ids) {
          if (wide) {
            const auto v = static_cast<uint32_t>(id);
            out.write(reinterpret_cast<const char*>(&v), 4);
          } else {
            const auto v = static_cast<uint16_t>(id);
            out.write(reinterpret_cast<const char*>(&v), 2);
          }
        }
        count += static_cast<int64_t>(ids.size());
      });
    });
    const nlohmann::json sidecar = {{"dtype", summary.dtype},
                                    {"tokenizer", tokenizer->describe()},
                                    {"vocab_size", tokenizer->vocabSize()},
                                    {"tokens", count},
                                    {"special_tokens_added", job.add_special}};
    io::writeTextFileAtomically(std::filesystem::path(job.out).replace_extension(".json"), sidecar.dump(2) + "\n");
  }
  const auto s = stream->stats();
  summary.tokens = count;
  summary.documents = s.documents;
  summary.bytes = s.bytes;
  summary.invalid_utf8_replaced = s.invalid_utf8_replaced;
  return summary;
}

}  // namespace posgeom::jobs
