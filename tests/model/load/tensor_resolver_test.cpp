#include "posgeom/model/load/tensor_resolver.h"

#include <algorithm>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors_writer.h"
#include "captured_log.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(TensorResolver, CandidatesCoverPrefixesAndLegacyNames) {
  const auto names = model::candidateNames("embeddings.LayerNorm.weight", {"bert."});
  const std::vector<std::string> expected{"embeddings.LayerNorm.weight", "bert.embeddings.LayerNorm.weight",
                                          "embeddings.LayerNorm.gamma", "bert.embeddings.LayerNorm.gamma"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(model::candidateNames("wte.weight", {}).size(), 1u);
}

class ResolverOnGpt2 : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto dir = sharedDir() / "fixtures/models/tiny-gpt2";
    if (!sharedDir().empty() && std::filesystem::exists(dir)) config_ = model::loadModelConfig(dir);
  }
  model::ModelConfig config_;
};

TEST_F(ResolverOnGpt2, FindsEveryRequiredTensorAndSkipsAbsentOptionalOnes) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  const auto checkpoint = io::Checkpoint::open(sharedDir() / "fixtures/models/tiny-gpt2");
  const auto& arch = model::architectureFor("gpt2", "");
  const auto resolved = model::resolveTensors(checkpoint, arch, config_);
  EXPECT_EQ(resolved.size(), 4u + 12u * 3u);  // wte, wpe, ln_f x2 and 12 per block; tied head absent
}

TEST_F(ResolverOnGpt2, IntegerTensorWhereWeightsBelongIsRejected) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto src = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-gpt2/model.safetensors");
  io::SafetensorsWriter w;
  for (const auto& [name, v] : src.tensors()) {
    if (name == "ln_f.bias") {
      std::vector<int64_t> zeros(64, 0);
      w.addI64(name, {64}, zeros);
    } else {
      w.add(name, v.dtype, v.shape, v.data, v.nbytes);
    }
  }
  std::filesystem::create_directories(s / "m");
  w.write(s / "m" / "model.safetensors");
  const auto checkpoint = io::Checkpoint::open(s / "m");
  try {
    model::resolveTensors(checkpoint, model::architectureFor("gpt2", ""), config_);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'ln_f.bias' is I64"), std::string::npos) << e.what();
  }
}

// What resolving a model gave: the canonical names loaded and the warnings logged.
struct Resolved {
  std::vector<std::string> names;
  std::string log;
};

// Rewrites a model's model.safetensors with its tensors and those `add` writes.
void addTensors(const std::filesystem::path& model_dir,
                const std::function<void(io::SafetensorsWriter&, const io::SafetensorsFile&)>& add) {
  const auto path = model_dir / "model.safetensors";
  {
    const auto src = io::SafetensorsFile::open(path);
    io::SafetensorsWriter w;
    for (const auto& [name, v] : src.tensors()) w.add(name, v.dtype, v.shape, v.data, v.nbytes);
    add(w, src);
    w.write(model_dir / "rewritten.safetensors");
  }
  std::filesystem::rename(model_dir / "rewritten.safetensors", path);
}

Resolved resolveDir(const std::filesystem::path& model_dir) {
  const auto config = model::loadModelConfig(model_dir);
  const CapturedLog log;
  Resolved out;
  const auto checkpoint = io::Checkpoint::open(model_dir);
  for (const auto& t : model::resolveTensors(checkpoint, model::architectureFor(config.model_type, ""), config))
    out.names.push_back(t.spec.name);
  out.log = log.str();
  return out;
}

// An edited copy of an hf fixture, `extra` tensors added to its model.safetensors, resolved.
Resolved resolveEdited(const std::filesystem::path& dir, const std::string& fixture,
                       const std::function<void(nlohmann::json&)>& edit, const std::vector<std::string>& extra = {}) {
  const auto model_dir = editedHfFixture(dir, fixture, edit);
  if (!extra.empty())
    addTensors(model_dir, [&](io::SafetensorsWriter& w, const io::SafetensorsFile&) {
      for (const auto& name : extra) w.addF32(name, {2}, {1.0F, 2.0F});
    });
  return resolveDir(model_dir);
}

std::string resolveError(const std::string& fixture, const std::function<void(nlohmann::json&)>& edit) {
  ScratchDir s;
  try {
    resolveEdited(s.path(), fixture, edit);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A config that counts fewer layers than the checkpoint holds analyses a smaller model than
// the one stored: refused, under the family's own key for the count.
TEST(TensorResolver, LayersPastTheConfigsCountAreRefused) {
  auto msg = resolveError("hf-llama", [](nlohmann::json& c) { c["num_hidden_layers"] = 1; });
  EXPECT_NE(msg.find("config.json: num_hidden_layers is 1 but model.safetensors holds layers 0..1"), std::string::npos)
      << msg;
  msg = resolveError("hf-gpt2", [](nlohmann::json& c) { c["n_layer"] = 1; });
  EXPECT_NE(msg.find("config.json: n_layer is 1 but model.safetensors holds layers 0..1"), std::string::npos) << msg;
}

// transformers warns about stored tensors its model does not use and goes on; so does this
// (one line: the count and the first names). Buffers it ignores without a word stay quiet.
TEST(TensorResolver, UnusedTensorsAreWarnedAboutOnce) {
  ScratchDir s;
  const auto r = resolveEdited(s.path(), "hf-llama", [](nlohmann::json&) {},
                               {"model.extra.weight", "score.weight", "model.layers.0.self_attn.rotary_emb.inv_freq"});
  EXPECT_NE(r.log.find("model.safetensors: 2 tensors are not used by the Llama model and left out, as transformers "
                       "does: model.extra.weight, score.weight"),
            std::string::npos)
      << r.log;
  EXPECT_EQ(r.log.find("inv_freq"), std::string::npos) << r.log;
  ScratchDir quiet;
  EXPECT_EQ(resolveEdited(quiet.path(), "hf-gpt2", [](nlohmann::json&) {}, {"transformer.h.1.attn.bias"}).log, "");
  ScratchDir plain;
  EXPECT_EQ(resolveEdited(plain.path(), "hf-bert", [](nlohmann::json&) {}).log, "");  // its pooler: not computed here
}

// A full T5's decoder and head are left out by design, without a word; a module entry
// ("decoder.") covers that module only, not a name that merely contains it.
TEST(TensorResolver, AModuleUnusedByDesignIsQuietAndOnlyIt) {
  ScratchDir s;
  const auto r = resolveEdited(s.path(), "hf-t5", [](nlohmann::json&) {}, {"encoder.extra.weight", "encoderdecoder.weight"});
  EXPECT_NE(r.log.find("2 tensors are not used by the T5 model and left out, as transformers does: "
                       "encoder.extra.weight, encoderdecoder.weight"),
            std::string::npos)
      << r.log;
  EXPECT_EQ(r.log.find("decoder.block"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("lm_head"), std::string::npos) << r.log;
  ScratchDir quiet;
  EXPECT_EQ(resolveEdited(quiet.path(), "hf-t5", [](nlohmann::json&) {}).log, "");
}

// tie_word_embeddings true with a stored lm_head.weight: transformers ties the head to the
// embedding over what the file holds. The stored head is not loaded, and a warning says so.
TEST(TensorResolver, ATiedHeadIsTheEmbeddingEvenWhenOneIsStored) {
  ScratchDir s;
  const auto r = resolveEdited(s.path(), "hf-llama", [](nlohmann::json& c) { c["tie_word_embeddings"] = true; });
  for (const auto& name : r.names) EXPECT_NE(name, "lm_head.weight");
  EXPECT_NE(r.log.find("'lm_head.weight' is not used: tie_word_embeddings is true"), std::string::npos) << r.log;
  ScratchDir untied;
  const auto names = resolveEdited(untied.path(), "hf-llama", [](nlohmann::json&) {}).names;
  EXPECT_NE(std::find(names.begin(), names.end(), "lm_head.weight"), names.end());
}

// A checkpoint that stores its tied head as a copy of the embedding loses nothing: no warning,
// and no "not used" line for it either.
TEST(TensorResolver, AStoredCopyOfTheTiedEmbeddingIsQuiet) {
  ScratchDir s;
  const auto dir = editedHfFixture(s.path(), "hf-gpt2", [](nlohmann::json&) {});
  addTensors(dir, [](io::SafetensorsWriter& w, const io::SafetensorsFile& src) {
    const auto& wte = src.get("transformer.wte.weight");
    w.add("lm_head.weight", wte.dtype, wte.shape, wte.data, wte.nbytes);
  });
  const auto r = resolveDir(dir);
  EXPECT_EQ(r.log, "");
  EXPECT_EQ(std::find(r.names.begin(), r.names.end(), "lm_head.weight"), r.names.end());
}

}  // namespace
}  // namespace posgeom::testing
