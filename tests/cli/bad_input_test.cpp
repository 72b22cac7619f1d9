// docs/bad-input.md, row by row: every kind of bad input gets its documented answer,
// exit code 2 with one error line naming the file and the fault, and nothing half-written.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <set>

#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;
using Args = std::vector<std::string>;

struct BadInput {
  std::string id;  // the row's case in docs/bad-input.md
  // Prepares files under `dir` and returns the posgeom arguments (without --out).
  std::function<Args(const fs::path& dir)> setup;
  int exit_code = 2;
  std::string says;  // in the error line, or on stderr for exit 0
  std::function<void(const fs::path& out)> check = nullptr;  // more, on the output
  std::string file_size_limit;  // ulimit -f for the run, in KiB
};

void PrintTo(const BadInput& c, std::ostream* os) { *os << c.id; }

BadInput row(std::string id, std::function<Args(const std::filesystem::path&)> setup, int exit_code, std::string says,
             std::function<void(const std::filesystem::path&)> check = nullptr, std::string file_size_limit = "") {
  return {std::move(id), std::move(setup), exit_code, std::move(says), std::move(check), std::move(file_size_limit)};
}

const fs::path kDefaultModel = fs::path(POSGEOM_SOURCE_DIR) / "models/default";
fs::path fixtureModel(const std::string& name) { return sharedDir() / "fixtures/models" / name; }

// `args` with each "--option value" (or flag) of `more` set: replaced where present, else added.
Args with(Args args, const Args& more) {
  for (size_t i = 0; i < more.size(); ++i) {
    const bool has_value = i + 1 < more.size() && more[i + 1].rfind("--", 0) != 0;
    const auto at = std::find(args.begin(), args.end(), more[i]);
    if (at == args.end()) {
      args.push_back(more[i]);
      if (has_value) args.push_back(more[i + 1]);
    } else if (has_value) {
      *(at + 1) = more[i + 1];
    }
    if (has_value) ++i;
  }
  return args;
}
// The bundled default model (87 character ids) on a text file: the cheapest real run.
Args onText(const fs::path& corpus, const Args& more = {}) {
  return with({"analyze", "--model", kDefaultModel.string(), "--corpus", corpus.string(), "--seq-len", "16", "--screenot-k", "3"}, more);
}
// A model (tiny-gpt2 by default, copied when it is to be damaged) on random ids.
Args onRandomIds(const fs::path& model, const Args& more = {}) {
  return with({"analyze", "--model", model.string(), "--corpus", "random", "--num-seqs", "2", "--seq-len", "16", "--screenot-k", "3"},
              more);
}
fs::path damagedGpt2(const fs::path& dir, const std::function<void(const fs::path&)>& damage) {
  const auto model = copyFixtureModel("tiny-gpt2", dir);
  damage(model);
  return model;
}
void editConfig(const fs::path& model, const std::function<void(nlohmann::json&)>& edit) {
  auto c = nlohmann::json::parse(readFile(model / "config.json"));
  edit(c);
  writeFile(model / "config.json", c.dump());
}
fs::path textFile(const fs::path& dir, const std::string& name, const std::string& text) {
  writeFile(dir / name, text);
  return dir / name;
}
std::string prose(int characters) {
  std::string s;
  while (static_cast<int>(s.size()) < characters) s += "the quick brown fox jumps over the lazy dog. ";
  return s.substr(0, static_cast<size_t>(characters));
}
std::string jsonLines(bool with_broken_row) {
  std::string rows;
  for (int i = 0; i < 4; ++i) {
    rows += nlohmann::json{{"text", prose(200)}}.dump() + "\n";
    if (i == 0 && with_broken_row) rows += "{broken\n";
  }
  return rows;
}
// A pre-tokenized uint16 .bin of 300 ids, the last one `last`.
fs::path idsFile(const fs::path& dir, uint16_t last) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    const uint16_t id = i == 299 ? last : 5;
    bytes.push_back(static_cast<char>(id & 0xff));
    bytes.push_back(static_cast<char>(id >> 8));
  }
  return textFile(dir, "ids.bin", bytes);
}
nlohmann::json summaryIn(const fs::path& out) { return nlohmann::json::parse(readFile(out / "summary.json")); }

// A first run stopped after two windows in `dir`/out, for the --resume rows.
Args stoppedRun(const fs::path& dir, const fs::path& corpus) {
  const auto first = onText(corpus, {"--batch-size", "2", "--stop-after", "2", "--out", (dir / "out").string()});
  const auto r = runPosgeom(first);
  if (r.exit_code != 0) ADD_FAILURE() << r.err;
  return onText(corpus, {"--batch-size", "2", "--resume", (dir / "out").string()});
}

// The default model on text, tokenized by GPT-2 files (vocab.json, merges.txt) written here.
Args onGpt2Tokenizer(const fs::path& dir, const std::string& vocab_json, const std::string& merges_txt) {
  fs::create_directories(dir / "tok");
  writeFile(dir / "tok/vocab.json", vocab_json);
  writeFile(dir / "tok/merges.txt", merges_txt);
  return onText(textFile(dir, "a.txt", prose(500)), {"--tokenizer", (dir / "tok").string()});
}

// Shard i of n of a run on the default model, its state in `dir`/s<i>; `more` adds options.
fs::path shardState(const fs::path& dir, int i, int n, const Args& more = {}) {
  const auto corpus = dir / "a.txt";
  if (!fs::exists(corpus)) writeFile(corpus, prose(2000));
  const auto out = dir / ("s" + std::to_string(i));
  auto args = with(onText(corpus, {"--num-seqs", "8", "--shard", std::to_string(i) + "/" + std::to_string(n), "--out",
                                   out.string()}),
                   more);
  const auto r = runPosgeom(args);
  if (r.exit_code != 0) ADD_FAILURE() << r.err;
  // A stopped run's state stays in the work directory beside --out.
  return fs::exists(out / "state.safetensors") ? out / "state.safetensors" : dir / (".s" + std::to_string(i) + ".posgeom-work/state.safetensors");
}
Args mergeOf(const std::vector<fs::path>& states) {
  Args args{"merge"};
  for (const auto& s : states) args.push_back(s.string());
  return args;
}

std::vector<BadInput> cases() {
  std::vector<BadInput> c;
  c.push_back(row("model-dir-missing", [](const fs::path& d) { return onRandomIds(d / "none"); }, 2, "model directory does not exist"));
  c.push_back(row("model-file-unreadable",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) {
                   fs::remove(m / "config.json");
                   fs::create_directory(m / "config.json");
                 }));
               },
               2, "config.json: is not a regular file"));
  c.push_back(row("config-not-json",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) { writeFile(m / "config.json", "{\"model_type\": \"gpt2\","); }));
               },
               2, "config.json: invalid JSON at byte"));
  c.push_back(row("config-missing-key",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) { editConfig(m, [](auto& j) { j.erase("n_embd"); }); }));
               },
               2, "config.json: missing key 'n_embd' or 'hidden_size'"));
  c.push_back(row("config-contradictory",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) { editConfig(m, [](auto& j) { j["n_head"] = 5; }); }));
               },
               2, "config.json: hidden size 64 is not divisible by the 5 attention heads"));
  c.push_back(row("config-layers-beyond-checkpoint",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) { editConfig(m, [](auto& j) { j["n_layer"] = 1000000000; }); }));
               },
               2, "config.json: its 1000000000 layers cannot be in the "));
  c.push_back(row("model-type-unsupported",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) { editConfig(m, [](auto& j) { j["model_type"] = "xlnet"; }); }));
               },
               2, "config.json: unsupported model_type 'xlnet' (supported: bert, bloom, cohere, cohere2, deberta-v2, deepseek_v2, deepseek_v3, falcon, gemma, gemma2, gemma3, gemma3_text, gpt2, gpt_neo, gpt_neox, gpt_oss, gptj, granite, llama, mistral, mixtral, modernbert, mpt, mt5, olmo, olmo2, olmo3, olmoe, opt, phi, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe, roberta, smollm3, stablelm, starcoder2, t5)"));
  c.push_back(row("weights-missing",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) { fs::remove(m / "model.safetensors"); }));
               },
               2, "tiny-gpt2: no model weights found"));
  c.push_back(row("weights-wrong-shape",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) { editConfig(m, [](auto& j) { j["n_embd"] = 32; }); }));
               },
               2, "model.safetensors: tensor 'wte.weight' has shape [1000, 64] but"));
  c.push_back(row("safetensors-huge-header",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) {
                   auto bytes = readFile(m / "model.safetensors");
                   const uint64_t claimed = uint64_t{5} << 30;
                   for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>((claimed >> (8 * i)) & 0xff);
                   writeFile(m / "model.safetensors", bytes);
                 }));
               },
               2, "model.safetensors: header length 5368709120 runs past the end of the file"));
  c.push_back(row("safetensors-truncated",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) {
                   fs::resize_file(m / "model.safetensors", fs::file_size(m / "model.safetensors") / 2);
                 }));
               },
               2, "bytes of data"));
  c.push_back(row("weights-nan",
               [](const fs::path& d) {
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) {
                   fillF32Tensor(m / "model.safetensors", "ln_f.weight", std::numeric_limits<float>::quiet_NaN());
                 }));
               },
               2, "model.safetensors: tensor 'ln_f.weight' holds NaN or Inf"));
  c.push_back(row("activations-not-float",
               [](const fs::path& d) {
                 const std::string header = R"({"hidden": {"dtype": "I32", "shape": [2, 2, 16, 8], "data_offsets": [0, 2048]}})";
                 writeFile(d / "act.safetensors", safetensorsBytes(header, std::string(2048, '\0')));
                 return Args{"analyze", "--activations", (d / "act.safetensors").string(), "--screenot-k", "3"};
               },
               2, "act.safetensors: 'hidden' is I32: hidden states must be a floating-point dtype"));
  c.push_back(row("activations-nan",
               [](const fs::path& d) {
                 // Finite weights whose product overflows float32 in block 1's MLP.
                 return onRandomIds(damagedGpt2(d, [](const fs::path& m) {
                   fillF32Tensor(m / "model.safetensors", "h.1.mlp.c_fc.weight", 1e30f);
                   fillF32Tensor(m / "model.safetensors", "h.1.mlp.c_proj.weight", 1e30f);
                 }));
               },
               2, "hidden.2: NaN or Inf in the activations (first at this hidden state, in the batch from window 0); the run is in "
                  "float32, so the model's config.json or weights make them"));
  c.push_back(row("tokenizer-missing",
               [](const fs::path& d) {
                 return Args{"analyze", "--model", fixtureModel("tiny-gpt2").string(), "--corpus",
                             textFile(d, "a.txt", prose(500)).string()};
               },
               2, "tiny-gpt2: no tokenizer found (looked for tokenizer.json, vocab.json + merges.txt, vocab.txt, tokenizer.model); give one with --tokenizer DIR"));
  c.push_back(row("tokenizer-malformed",
               [](const fs::path& d) {
                 fs::copy(kDefaultModel, d / "m", fs::copy_options::recursive);
                 writeFile(d / "m/tokenizer.json", "{\"model\": {");
                 return onText(textFile(d, "a.txt", prose(500)), {"--model", (d / "m").string()});
               },
               2, "m/tokenizer.json: invalid JSON at byte"));
  c.push_back(row("tokenizer-byte-tokens-missing",
               [](const fs::path& d) { return onGpt2Tokenizer(d, R"({"a": 0, "b": 1, "ab": 2})", "#version: 0.2\na b\n"); },
               2, "vocab.json: the byte-level vocabulary has no token for 254 of the 256 bytes (the first: byte 0x00"));
  c.push_back(row("tokenizer-empty-vocabulary",
               [](const fs::path& d) { return onGpt2Tokenizer(d, "{}", "#version: 0.2\n"); },
               2, "merges.txt: the vocabulary is empty: no text can be tokenized"));
  c.push_back(row("tokenizer-vocab-mismatch",
               [](const fs::path& d) {
                 return onText(textFile(d, "a.txt", prose(500)), {"--tokenizer", (sharedDir() / "data/tokenizers/gpt2").string()});
               },
               2, "gpt2: the tokenizer's 50257 ids do not fit the model's embedding of 87"));
  c.push_back(row("seq-len-learned",
               [](const fs::path&) { return onRandomIds(fixtureModel("tiny-gpt2"), {"--seq-len", "300"}); }, 2,
               "--seq-len: 300 exceeds the model's 128 learned positions"));
  c.push_back(row("seq-len-relative",
               [](const fs::path&) { return onRandomIds(fixtureModel("tiny-llama"), {"--seq-len", "300", "--layer", "1"}); }, 0,
               "warning: --seq-len 300 is beyond the 256 positions the model was trained on (RoPE positions extrapolate)",
               [](const fs::path& out) { EXPECT_EQ(summaryIn(out)["seq_len"], 300); }));
  c.push_back(row("corpus-symlink-loop",
               [](const fs::path& d) {
                 fs::create_symlink(d / "loop", d / "loop");
                 return onText(d / "loop");
               },
               2, "loop: Too many levels of symbolic links"));
  c.push_back(row("corpus-missing", [](const fs::path& d) { return onText(d / "none.txt"); }, 2, "none.txt: corpus does not exist"));
  c.push_back(row("corpus-empty", [](const fs::path& d) { return onText(textFile(d, "a.txt", "")); }, 2,
               "a.txt: corpus has 0 tokens, fewer than one window of 16"));
  c.push_back(row("corpus-shorter-than-window", [](const fs::path& d) { return onText(textFile(d, "a.txt", "hello world!"), {"--seq-len", "64"}); },
               2, "a.txt: corpus has 12 tokens, fewer than one window of 64"));
  c.push_back(row("corpus-invalid-utf8",
               [](const fs::path& d) { return onText(textFile(d, "a.txt", prose(100) + "\xff\xfe" + prose(100) + "\xc3")); }, 0,
               "warning: 3 invalid UTF-8 sequences were replaced",
               // \xff, \xfe, and the cut-off \xc3
               [](const fs::path& out) { EXPECT_EQ(summaryIn(out)["data"]["invalid_utf8_replaced"], 3); }));
  c.push_back(row("ids-out-of-range", [](const fs::path& d) { return onText(idsFile(d, 200)); }, 2,
               "ids.bin: token id 200 at offset 299 is outside the vocabulary of 87"));
  c.push_back(row("npy-shorter-than-header",
               [](const fs::path& d) {
                 // 300 uint16 ids under a header that claims 1000.
                 std::string header = "{'descr': '<u2', 'fortran_order': False, 'shape': (1000,), }";
                 header.append(64 - (10 + header.size() + 1) % 64, ' ');
                 header += '\n';
                 std::string npy = std::string("\x93NUMPY\x01", 7) + '\0' + static_cast<char>(header.size()) + '\0' + header;
                 return onText(textFile(d, "ids.npy", npy + readFile(idsFile(d, 5))));
               },
               2, "ids.npy: .npy header says 1000 ids but the file holds 300"));
  c.push_back(row("jsonl-no-text-field",
               [](const fs::path& d) { return onText(textFile(d, "rows.jsonl", "{\"content\": \"a b c\", \"id\": 1}\n{\"content\": \"d\"}\n")); },
               2, "rows.jsonl: none of its 2 rows has text to read: line 1 has no string field 'text' (its fields: content, id) (--text-field and --label-field name the fields)"));
  c.push_back(row("ids-truncated", [](const fs::path& d) { return onText(textFile(d, "ids.bin", "abc")); }, 2,
               "ids.bin: file size is not a multiple of the 2-byte token size"));
  c.push_back(row("jsonl-malformed", [](const fs::path& d) { return onText(textFile(d, "rows.jsonl", jsonLines(true))); }, 0,
               "warning: 1 malformed JSON Lines rows were skipped",
               [](const fs::path& out) {
                 const auto data = summaryIn(out)["data"];
                 EXPECT_EQ(data["skipped_rows"], 1);
                 EXPECT_EQ(data["documents"], 4);
               }));
  c.push_back(row("jsonl-malformed-strict",
               [](const fs::path& d) { return onText(textFile(d, "rows.jsonl", jsonLines(true)), {"--strict"}); }, 2,
               "rows.jsonl: line 2 is not a JSON object"));
  c.push_back(row("out-not-empty",
               [](const fs::path& d) {
                 fs::create_directories(d / "out");
                 writeFile(d / "out/notes.txt", "mine");
                 return onText(textFile(d, "a.txt", prose(500)));
               },
               2, "out: exists and is not empty; pass --force to replace it",
               [](const fs::path& out) { EXPECT_EQ(readFile(out / "notes.txt"), "mine"); }));
  c.push_back(row("out-foreign-files",
               [](const fs::path& d) {
                 fs::create_directories(d / "out");
                 writeFile(d / "out/summary.json", "{}");
                 writeFile(d / "out/notes.txt", "mine");
                 return onText(textFile(d, "a.txt", prose(500)), {"--force"});
               },
               2, "out: holds 'notes.txt', which is not a posgeom report's file; --force replaces a report whole",
               [](const fs::path& out) { EXPECT_EQ(readFile(out / "notes.txt"), "mine"); }));
  c.push_back(row("out-interrupted-state",
               [](const fs::path& d) {
                 const auto corpus = textFile(d, "a.txt", prose(500));
                 const auto r = runPosgeom(onText(corpus, {"--batch-size", "2", "--stop-after", "2", "--out", (d / "out").string()}));
                 if (r.exit_code != 0) ADD_FAILURE() << r.err;
                 return onText(corpus);
               },
               2, ".out.posgeom-work: --resume ",
               [](const fs::path& out) {
                 EXPECT_TRUE(fs::exists(out.parent_path() / ".out.posgeom-work/state.safetensors"));  // kept
               }));
  c.push_back(row("disk-full", [](const fs::path& d) { return onText(textFile(d, "a.txt", prose(2000))); }, 2,
               ".out.posgeom-work/state.safetensors: cannot write: File too large", nullptr, "64"));
  c.push_back(row("memory-exceeded", [](const fs::path& d) { return onText(textFile(d, "a.txt", prose(500)), {"--max-memory", "1K"}); },
               2, "but 1.0 KiB is allowed (--max-memory); not even one window fits"));
  c.push_back(row("memory-batch-too-large",
               [](const fs::path&) { return onRandomIds(fixtureModel("tiny-gpt2"), {"--batch-size", "100000", "--num-seqs", "100000", "--seq-len", "128", "--max-memory", "2G"}); },
               2, "is allowed (--max-memory); --batch-size "));
  c.push_back(row("wave-without-layer-major",
               [](const fs::path& d) { return onText(textFile(d, "a.txt", prose(500)), {"--wave", "8"}); }, 2,
               "--wave: sizes the waves of --layer-major: add --layer-major"));
  c.push_back(row("layer-cosines-with-layer-major",
               [](const fs::path& d) { return onText(textFile(d, "a.txt", prose(500)), {"--layer-cosines", "--layer-major"}); }, 2,
               "--layer-cosines: needs a batch's every layer at once, which --layer-major never holds: drop one of them"));
  c.push_back(row("wave-too-large",
               [](const fs::path& d) {
                 return onText(textFile(d, "a.txt", prose(500)), {"--layer-major", "--wave", "1000000000000000", "--max-memory", "2G"});
               },
               2, "is left beside a batch (--max-memory); --wave "));
  c.push_back(row("wave-negative",
               [](const fs::path& d) { return onText(textFile(d, "a.txt", prose(500)), {"--layer-major", "--wave", "-1"}); }, 2,
               "--wave: must not be negative"));
  c.push_back(row("screenot-k-too-large",
               [](const fs::path& d) { return onText(textFile(d, "a.txt", prose(500)), {"--screenot-k", "100"}); }, 2,
               "--screenot-k: 100 is too large: it must be below min(rows, cols) = 15"));
  // Values that mean nothing are refused, not run at a default (issue 22).
  auto tiny = [](const Args& more) { return [more](const fs::path&) { return onRandomIds(fixtureModel("tiny-gpt2"), more); }; };
  c.push_back(row("seq-len-not-positive", tiny({"--seq-len", "0"}), 2, "--seq-len: must be a whole number >= 2 (got 0)"));
  c.push_back(row("num-seqs-not-positive", tiny({"--num-seqs", "-1"}), 2, "--num-seqs: must be a whole number >= 1 (got -1)"));
  c.push_back(row("screenot-k-zero", tiny({"--screenot-k", "0"}), 2, "--screenot-k: must be a whole number >= 1 (got 0)"));
  c.push_back(row("neurons-without-heads", tiny({"--neurons"}), 2, "--neurons: reads the kernels of --heads: add --heads"));
  c.push_back(row("neurons-unsupported-family",
               [](const fs::path&) { return onRandomIds(fixtureModel("tiny-bloom"), {"--heads", "--neurons"}); }, 2,
               "--neurons: is not available for model_type 'bloom' (it is for gpt2, bert, roberta and the Llama-style families: llama, mistral, qwen2, qwen3, gemma, phi3, granite, smollm3, starcoder2, stablelm without use_parallel_residual, olmo without clip_qkv)"));
  c.push_back(row("neurons-mixture-of-experts",
               [](const fs::path&) { return onRandomIds(hfFixtureDir("hf-mixtral"), {"--heads", "--neurons"}); }, 2,
               "--neurons: is not available for model_type 'mixtral': block 0's MLP is a mixture of experts"));
  c.push_back(row("repeated-random-too-short",
               [](const fs::path&) {
                 return Args{"analyze", "--model", fixtureModel("tiny-gpt2").string(), "--corpus", "repeated-random", "--num-seqs", "2",
                             "--seq-len", "5"};
               },
               2, "--corpus repeated-random: needs windows of at least 6 tokens (three copies of 2), not 5"));
  c.push_back(row("lowfreq-k-out-of-range", tiny({"--lowfreq-k", "100"}), 2,
               "--lowfreq-k: 100 is outside 1..15 (the positions of a window after --skip-first)"));
  c.push_back(row("skip-first-negative", tiny({"--skip-first", "-3"}), 2, "--skip-first: must be a whole number >= 0 (got -3)"));
  c.push_back(row("out-locked",
               [](const fs::path& d) {
                 // Another run holds the lock of d/out (this process, for the child posgeom to meet).
                 const int fd = ::open((d / ".out.posgeom-lock").c_str(), O_RDWR | O_CREAT, 0644);
                 EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
                 EXPECT_EQ(::write(fd, "4242\n", 5), 5);
                 return onRandomIds(fixtureModel("tiny-gpt2"));  // fd stays open, and the lock held, past the run
               },
               2, "out: is being written by another posgeom run (pid 4242); wait for it to finish or choose another --out"));
  c.push_back(row("context-cap-negative", tiny({"--context-cap", "-5"}), 2, "--context-cap: must be a whole number >= 0 (got -5)"));
  c.push_back(row("layer-trailing-comma", tiny({"--layer", "2,0,"}), 2, "--layer: '2,0,' ends in a comma"));
  c.push_back(row("kernel-skip-beyond-window", tiny({"--heads", "--kernel-skip", "64"}), 2,
               "--kernel-skip: 64 leaves no keys in windows of 16 (at most 15)"));
  c.push_back(row("unknown-option", [](const fs::path& d) { return onText(d / "a.txt", {"--no-such-option"}); }, 2,
               "The following argument was not expected: --no-such-option (see --help)"));
  c.push_back(row("resume-nothing-saved",
               [](const fs::path& d) {
                 fs::create_directories(d / "out");
                 return onText(textFile(d, "a.txt", prose(500)), {"--resume", (d / "out").string()});
               },
               2, "out: holds no state.safetensors to resume from"));
  c.push_back(row("resume-other-settings",
               [](const fs::path& d) {
                 return with(stoppedRun(d, textFile(d, "a.txt", prose(500))), {"--seq-len", "32"});
               },
               2, ".out.posgeom-work/state.safetensors: was saved by a run with other settings: seq_len (saved 16, now 32)"));
  c.push_back(row("resume-other-corpus",
               [](const fs::path& d) {
                 const auto corpus = textFile(d, "a.txt", prose(500));
                 auto args = stoppedRun(d, corpus);
                 writeFile(corpus, "THE QUICK " + prose(490));
                 return args;
               },
               2, "a.txt: is not the corpus the saved run read (its files differ)"));
  c.push_back(row("resume-other-weights",
               [](const fs::path& d) {
                 const auto model = d / "model";
                 fs::copy(kDefaultModel, model);
                 const auto corpus = textFile(d, "a.txt", prose(500));
                 auto args = with(stoppedRun(d, corpus), {"--model", model.string()});
                 // The first run used the bundled model's path; the resume names a copy of it,
                 // which is the same model, so only the swapped weights below are refused.
                 auto bytes = readFile(model / "model.safetensors");
                 uint64_t header = 0;
                 std::memcpy(&header, bytes.data(), 8);
                 std::swap_ranges(bytes.begin() + 8 + header + 64, bytes.begin() + 8 + header + 68, bytes.begin() + 8 + header + 128);
                 writeFile(model / "model.safetensors", bytes);
                 return args;
               },
               2, "model: is not the model the saved run used (its config or weights differ"));
  c.push_back(row("resume-state-without-magnitudes",
               [](const fs::path& d) {
                 auto args = stoppedRun(d, textFile(d, "a.txt", prose(500)));
                 // The state as an earlier posgeom saved it: without the magnitude tensors.
                 const auto state = d / ".out.posgeom-work/state.safetensors";
                 io::SafetensorsWriter without;
                 {
                   const auto saved = io::SafetensorsFile::open(state);
                   for (const auto& [key, value] : saved.metadata()) without.setMetadata(key, value);
                   for (const auto& [name, view] : saved.tensors())
                     if (name.find("position_abs_max") == std::string::npos && name.find("max_where") == std::string::npos &&
                         name.find("magnitude_counts") == std::string::npos && name.find("skipped_position_sum") == std::string::npos &&
                         name.find("position_square_sum") == std::string::npos)
                       without.add(name, view.dtype, view.shape, view.data, view.nbytes);
                   without.write(d / "stripped.safetensors");
                 }
                 fs::rename(d / "stripped.safetensors", state);
                 return args;
               },
               2, "state.safetensors: layer 0 has no massive-activation statistics (a state of an earlier posgeom): run it again without --resume"));
  c.push_back(row("merge-same-state-twice",
               [](const fs::path& d) {
                 const auto s0 = shardState(d, 0, 2);
                 return mergeOf({s0, shardState(d, 1, 2), s0});
               },
               2, "s0/state.safetensors: holds shard 0/2 again: "));
  c.push_back(row("merge-overlapping-split",
               [](const fs::path& d) { return mergeOf({shardState(d, 0, 1), shardState(d, 1, 2)}); }, 2,
               "s1/state.safetensors: holds shard 1/2, of another split than "));
  c.push_back(row("merge-stopped-state",
               [](const fs::path& d) {
                 return mergeOf({shardState(d, 0, 2, {"--batch-size", "1"}),
                                 shardState(d, 1, 2, {"--stop-after", "1", "--batch-size", "1"})});
               },
               2, "s1.posgeom-work/state.safetensors: is the state of a stopped pass (1 windows): finish it with analyze --resume, or merge with --partial"));
  c.push_back(row("merge-missing-shard",
               [](const fs::path& d) { return mergeOf({shardState(d, 0, 3), shardState(d, 2, 3)}); }, 2,
               "merge: shard 1/3 missing (the states hold 0,2/3): give every shard's state, or --partial"));
  c.push_back(row("merge-other-corpus",
               [](const fs::path& d) {
                 const auto s0 = shardState(d, 0, 2);
                 writeFile(d / "a.txt", "THE QUICK " + prose(1990));
                 return mergeOf({s0, shardState(d, 1, 2)});
               },
               2, "another corpus (its files differ)"));
  c.push_back(row("train-save-every-negative",
                  [](const fs::path&) {
                    return Args{"train", "--config", (fs::path(POSGEOM_SOURCE_DIR) / "configs/train/addition-cpu.toml").string(),
                                "--save-every", "-3"};
                  },
                  2, "--save-every: must be a whole number >= 0 (got -3)"));
  c.push_back(row("train-stop-after-negative",
                  [](const fs::path&) {
                    return Args{"train", "--config", (fs::path(POSGEOM_SOURCE_DIR) / "configs/train/addition-cpu.toml").string(),
                                "--stop-after", "-5"};
                  },
                  2, "--stop-after: must be a whole number >= 0 (got -5)"));
  c.push_back(row("train-window-too-short",
                  [](const fs::path& d) {
                    writeFile(d / "short.toml", "[model]\ncontext = 10\n[data]\ntask = \"addition\"\ndigits = 4\nwindow = \"problem\"\n");
                    return Args{"train", "--config", (d / "short.toml").string()};
                  },
                  2, "short.toml: [model] context 10 is too short for one 4-digit problem per window (needs 16)"));
  c.push_back(row("dist-init-unknown",
                  [](const fs::path&) { return Args{"analyze", "--dist-init", "mpi://x"}; },
                  2, "--dist-init: 'mpi://x' is not env, none, tcp://HOST:PORT or file://PATH"));
  c.push_back(row("dist-timeout-zero",
                  [](const fs::path&) { return Args{"analyze", "--dist-timeout", "0"}; },
                  2, "--dist-timeout: must be at least 1 second"));
  // `posgeom batch`: a sweep of the bundled model on random ids, `top` before its tables and `more` after them.
  const auto sweep = [](const fs::path& d, const std::string& top, const std::string& more) {
    writeFile(d / "sweep.toml", top + "[analyze]\nseq-len = 16\nnum-seqs = 2\nscreenot-k = 3\n[corpora.wiki]\ncorpus = \"random\"\n"
                                      "[models.d]\nmodel = \"" + kDefaultModel.string() + "\"\n" + more);
    return Args{"batch", (d / "sweep.toml").string()};
  };
  c.push_back(row("batch-name-not-plain", [=](const fs::path& d) { return sweep(d, "", "[models.\"../../escaped\"]\nmodel = \"m\"\n"); },
                  2, "sweep.toml: [models.\"../../escaped\"]: is not a plain directory name, and it names the run's directory in out"));
  c.push_back(row("batch-names-collide",
                  [=](const fs::path& d) {
                    return sweep(d, "", "[models.\"a-b\"]\nmodel = \"m\"\n[models.a]\nmodel = \"m\"\n[corpora.\"b-wiki\"]\ncorpus = \"random\"\n");
                  },
                  2, "sweep.toml: [models.a-b] x [corpora.wiki] and [models.a] x [corpora.b-wiki] would both write a-b-wiki in out"));
  c.push_back(row("batch-reference-missing", [=](const fs::path& d) { return sweep(d, "reference = \"./no-such-dir\"\n", ""); },
                  2, "/no-such-dir: does not exist"));
  c.push_back(row("batch-reference-file-missing",
                  [=](const fs::path& d) {
                    fs::create_directories(d / "ref");
                    return sweep(d, "reference = \"./ref\"\n", "");
                  },
                  2, "/ref has no d-wiki.json: every model and corpus of the sweep is checked against its <model>-<corpus>.json"));
  c.push_back(row("batch-key-unknown", [=](const fs::path& d) { return sweep(d, "", "modell = \"x\"\n"); },
                  2, "sweep.toml: [models.d].modell: is not an analyze option (did you mean model?)"));
  c.push_back(row("batch-flag-with-value", [=](const fs::path& d) { return sweep(d, "", "heads = \"yes\"\n"); },
                  2, "sweep.toml: [models.d].heads: is a flag: true or false (got \"yes\")"));
  c.push_back(row("batch-config-key", [=](const fs::path& d) { return sweep(d, "", "[variants.v]\nconfig = \"/etc/passwd\"\n"); },
                  2, "sweep.toml: [variants.v].config: is not an analyze option: a sweep's tables hold the runs' options themselves"));
  c.push_back(row("batch-out-empty", [=](const fs::path& d) { return sweep(d, "out = \"\"\n", ""); },
                  2, "sweep.toml: out: is empty: name the directory the sweep writes into"));
  c.push_back(row("batch-table-column-unknown", [=](const fs::path& d) { return sweep(d, "", "table-columns = [\"stabel_rank\"]\n"); },
                  2, "sweep.toml: [models.d].table-columns: 'stabel_rank' is not a column (screenot_rank, "));
  c.push_back(row("batch-table-layer-beyond-model", [=](const fs::path& d) { return sweep(d, "", "table-layers = [0, 99]\n"); },
                  2, "sweep.toml: [models.d].table-layers: 99 is not a layer of run d-wiki (its model's hidden states are 0 to 4)"));
  c.push_back(row("batch-series-same-step",
                  [=](const fs::path& d) {
                    for (const char* step : {"s/step_010", "s/step_10"}) fs::create_directories(d / step);
                    return sweep(d, "", "[models.s]\nmodel = \"./s/step_*\"\n");
                  },
                  2, "/s/step_10 are both step 10: a series holds one checkpoint a step"));
  c.push_back(row("batch-out-locked",
                  [=](const fs::path& d) {
                    // Another sweep holds d/out (this process, for the child posgeom to meet).
                    const int fd = ::open((d / ".out.posgeom-lock").c_str(), O_RDWR | O_CREAT, 0644);
                    EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
                    EXPECT_EQ(::write(fd, "4243\n", 5), 5);
                    return sweep(d, "", "");
                  },
                  2, "out: is being written by another posgeom run (pid 4243); wait for it to finish or choose another out (or --out)"));
  // forward and tokenize: the one-file output policy (io::OutputFile) and forward's ids.
  c.push_back(row("forward-random-ids-empty",
                  [](const fs::path&) { return Args{"forward", "--model", fixtureModel("tiny-gpt2").string(), "--random-ids", "0,16"}; },
                  2, "--random-ids: 0,16: B (sequences) and T (tokens each) must both be positive"));
  c.push_back(row("forward-random-ids-beyond-positions",
                  [](const fs::path&) {
                    return Args{"forward", "--model", fixtureModel("tiny-gpt2").string(), "--random-ids", "100000,100000"};
                  },
                  2, "--random-ids: T = 100000 exceeds the model's 128 positions"));
  c.push_back(row("forward-random-ids-beyond-memory",
                  [](const fs::path&) {
                    return Args{"forward", "--model", fixtureModel("tiny-llama").string(), "--random-ids", "1000000000,1000000000"};
                  },
                  2, "--random-ids: 1000000000 x 1000000000 ids give "));
  c.push_back(row("forward-hidden-state-non-finite",
                  [](const fs::path& d) {
                    const auto model = damagedGpt2(d, [](const fs::path& m) {
                      fillF32Tensor(m / "model.safetensors", "h.0.mlp.c_proj.weight", 3e38f);  // finite, but overflows
                    });
                    return Args{"forward", "--model", model.string(), "--random-ids", "2,16"};
                  },
                  2, "hidden.1 (the first non-finite output) holds NaN or Inf: this model's config or weights make its forward non-finite; nothing written"));
  c.push_back(row("forward-out-directory",
                  [](const fs::path& d) {
                    fs::create_directories(d / "out");
                    return Args{"forward", "--model", fixtureModel("tiny-gpt2").string(), "--random-ids", "2,16"};
                  },
                  2, "out: is a directory, but --out is a file; give the name of a file in it"));
  c.push_back(row("tokenize-out-directory",
                  [](const fs::path& d) {
                    fs::create_directories(d / "out");
                    return Args{"tokenize", "--tokenizer", (sharedDir() / "data/tokenizers/gpt2").string(), "--input",
                                textFile(d, "a.txt", "Hello world").string()};
                  },
                  2, "out: is a directory, but --out is a file; give the name of a file in it"));
  // posgeom train on a tiny text model, its TOML in d/t.toml; `model` and `optim`/`run` keys set as given.
  const auto trainToml = [](const fs::path& d, const std::string& optim = "", const std::string& run = "",
                            const std::string& model = "context = 16\n") {
    writeFile(d / "c.txt", prose(3000));
    writeFile(d / "t.toml", "[model]\nlayers = 1\nheads = 2\nwidth = 16\n" + model + "[data]\ncorpus = \"c.txt\"\n[optim]\n" +
                                "iterations = 20\nbatch_size = 2\n" + optim + "[run]\neval_interval = 10\neval_batches = 1\n" +
                                "checkpoint_interval = 5\n" + run);
    return (d / "t.toml").string();
  };
  // A run stopped at step 10 in d/out (one thread), and the arguments that resume it.
  const auto stoppedTraining = [trainToml](const fs::path& d, const std::string& optim = "") {
    const auto r = runPosgeom({"--threads", "1", "-q", "train", "--config", trainToml(d), "--out", (d / "out").string(), "--stop-after", "10"});
    if (r.exit_code != 0) ADD_FAILURE() << r.err;
    return Args{"--threads", "1", "train", "--config", trainToml(d, optim), "--out", (d / "out").string(), "--resume"};
  };
  const auto nothingThere = [](const fs::path& out) { EXPECT_FALSE(fs::exists(out)) << out; };
  c.push_back(row("train-learning-rate-inf",
                  [=](const fs::path& d) { return Args{"train", "--config", trainToml(d, "learning_rate = inf\n")}; },
                  2, "t.toml: [optim] learning_rate must be a finite number (got inf)", nothingThere));
  c.push_back(row("train-beta-out-of-range",
                  [=](const fs::path& d) { return Args{"train", "--config", trainToml(d, "beta2 = 1.5\n")}; },
                  2, "t.toml: [optim] beta1 and beta2 must be in [0, 1)", nothingThere));
  c.push_back(row("train-min-lr-above-lr",
                  [=](const fs::path& d) { return Args{"train", "--config", trainToml(d, "learning_rate = 0.002\nmin_learning_rate = 1\n")}; },
                  2, "t.toml: [optim] min_learning_rate 1 must be in [0, learning_rate 0.002]", nothingThere));
  c.push_back(row("train-seed-negative",
                  [=](const fs::path& d) { return Args{"train", "--config", trainToml(d, "", "seed = -7\n")}; },
                  2, "t.toml: [run] seed must be a whole number >= 0 (got -7)", nothingThere));
  c.push_back(row("train-too-large",
                  [=](const fs::path& d) { return Args{"train", "--config", trainToml(d, "", "", "context = 100000000\n")}; },
                  2, "t.toml: training needs about ", [](const fs::path& out) {
                    EXPECT_FALSE(fs::exists(out)) << out;
                  }));
  c.push_back(row("train-corpus-too-short",
                  [=](const fs::path& d) {
                    const auto config = trainToml(d);
                    writeFile(d / "c.txt", "ab");
                    return Args{"train", "--config", config};
                  },
                  2, "c.txt: the training split has 1 tokens, fewer than one window of 17", nothingThere));
  c.push_back(row("train-out-not-empty",
                  [=](const fs::path& d) {
                    fs::create_directories(d / "out");
                    writeFile(d / "out/summary.json", "{}");
                    return Args{"train", "--config", trainToml(d)};
                  },
                  2, "out: holds 'summary.json', which is not a posgeom training run's file; train replaces only a training run (with --force)",
                  [](const fs::path& out) { EXPECT_EQ(readFile(out / "summary.json"), "{}"); }));
  c.push_back(row("train-force-not-a-run",
                  [=](const fs::path& d) {
                    fs::create_directories(d / "out");
                    writeFile(d / "out/model.safetensors", "x");
                    writeFile(d / "out/notes.txt", "mine");
                    return Args{"train", "--config", trainToml(d), "--force"};
                  },
                  2, "out: holds 'notes.txt', which is not a posgeom training run's file",
                  [](const fs::path& out) { EXPECT_EQ(readFile(out / "model.safetensors"), "x"); }));
  c.push_back(row("train-resume-no-checkpoint",
                  [=](const fs::path& d) { return Args{"train", "--config", trainToml(d), "--out", (d / "out").string(), "--resume"}; },
                  2, "out/checkpoint.safetensors: no checkpoint to resume from", nothingThere));
  c.push_back(row("train-resume-other-config",
                  [=](const fs::path& d) { return stoppedTraining(d, "learning_rate = 0.002\n"); },
                  2, "out/checkpoint.safetensors: was made with another training config: optim.learning_rate (saved 0.001, now 0.002)"));
  c.push_back(row("train-resume-other-corpus",
                  [=](const fs::path& d) {
                    auto args = stoppedTraining(d);
                    writeFile(d / "c.txt", "THE QUICK " + prose(2990));
                    return args;
                  },
                  2, "c.txt: is not the corpus the checkpoint's run trained on (its contents differ; "));
  c.push_back(row("train-resume-before-the-step",
                  [=](const fs::path& d) { return with(stoppedTraining(d), {"--iterations", "5"}); },
                  2, "out/checkpoint.safetensors: is at step 10, past the 5 iterations asked: resume with --iterations 10 or more (the run was scheduled for 20)"));
  c.push_back(row("train-resume-other-threads",
                  [=](const fs::path& d) { return with(stoppedTraining(d), {"--threads", "2"}); },
                  2, "was saved by a run with 1 threads and this one has 2: the same loss curve needs the same threads, so resume with --threads 1"));
  c.push_back(row("eval-addition-text-model",
                  [](const fs::path&) { return Args{"eval-addition", "--model", kDefaultModel.string(), "--max-digits", "2", "--samples", "5"}; },
                  2, "default: was trained with [data] task = \"text\" (its train_config.json); eval-addition measures a model trained with [data] task = \"addition\"",
                  [](const fs::path& out) { EXPECT_FALSE(fs::exists(out)) << out; }));
  c.push_back(row("eval-addition-no-tokenizer",
                  [](const fs::path&) {
                    return Args{"eval-addition", "--model", (fs::path(POSGEOM_SOURCE_DIR) / "tests/fixtures/hf/hf-gpt2").string()};
                  },
                  2, "hf-gpt2: has no tokenizer (tokenizer.json, as posgeom train writes it); eval-addition measures a model trained with [data] task = \"addition\""));
  // Model configs and checkpoints (issue 31: values that made the forward NaN, tensors left out silently).
  c.push_back(row("config-value-breaks-forward",
                  [](const fs::path& d) {
                    return onRandomIds(damagedGpt2(d, [](const fs::path& m) { editConfig(m, [](auto& j) { j["layer_norm_epsilon"] = -1; }); }));
                  },
                  2, "config.json: layer_norm_epsilon must be a number >= 0 (got -1)"));
  c.push_back(row("config-rope-scaling-without-type",
                  [](const fs::path& d) {
                    const auto m = copyFixtureModel("tiny-llama", d);
                    editConfig(m, [](auto& j) { j["rope_scaling"] = {{"factor", 2.0}}; });
                    return onRandomIds(m);
                  },
                  2, "config.json: rope_scaling gives a factor but no rope_type"));
  c.push_back(row("config-infinity",
                  [](const fs::path& d) {
                    return onRandomIds(damagedGpt2(d, [](const fs::path& m) {
                      auto j = nlohmann::json::parse(readFile(m / "config.json"));
                      j["layer_norm_epsilon"] = "INF";
                      auto text = j.dump();
                      text.replace(text.find("\"INF\""), 5, "Infinity");
                      writeFile(m / "config.json", text);
                    }));
                  },
                  2, "key 'layer_norm_epsilon' holds Infinity, which is not JSON (JSON has no Infinity or NaN"));
  c.push_back(row("config-integer-too-large",
                  [](const fs::path& d) {
                    return onRandomIds(damagedGpt2(d, [](const fs::path& m) { editConfig(m, [](auto& j) { j["n_positions"] = 1e30; }); }));
                  },
                  2, "config.json: key 'n_positions' or 'max_position_embeddings' is 1e+30, too large"));
  c.push_back(row("config-layers-fewer-than-checkpoint",
                  [](const fs::path& d) {
                    return onRandomIds(damagedGpt2(d, [](const fs::path& m) { editConfig(m, [](auto& j) { j["n_layer"] = 1; }); }));
                  },
                  2, "config.json: n_layer is 1 but model.safetensors holds layers 0..2"));
  auto gpt_neo = [](const fs::path& d, const std::function<void(nlohmann::json&)>& edit) {
    fs::copy(fs::path(POSGEOM_SOURCE_DIR) / "tests/fixtures/hf/hf-gpt-neo", d / "neo", fs::copy_options::recursive);
    editConfig(d / "neo", edit);
    return onRandomIds(d / "neo");
  };
  c.push_back(row("gpt-neo-attention-types-negative",
                  [=](const fs::path& d) {
                    return gpt_neo(d, [](auto& j) { j["attention_types"] = {{{"global", "local"}, 1}, {{"local"}, -1}}; });
                  },
                  2, "config.json: attention_types repeats [\"local\"] -1 times: a repeat count must not be negative"));
  c.push_back(row("gpt-neo-attention-types-missing",
                  [=](const fs::path& d) { return gpt_neo(d, [](auto& j) { j.erase("attention_types"); }); },
                  2, "config.json: attention_types is not set, and transformers' default [[[\"global\",\"local\"],12]] gives 24 layers but num_layers is 2"));
  c.push_back(row("index-empty-weight-map",
                  [](const fs::path& d) {
                    const auto m = copyFixtureModel("tiny-llama", d);
                    writeFile(m / "model.safetensors.index.json", R"({"metadata": {}, "weight_map": {}})");
                    return onRandomIds(m);
                  },
                  2, "model.safetensors.index.json: weight_map is empty"));
  c.push_back(row("weights-beyond-dtype",
                  [](const fs::path& d) {
                    return onRandomIds(damagedGpt2(d, [](const fs::path& m) { fillF32Tensor(m / "model.safetensors", "ln_f.weight", 1e5F); }),
                                       {"--dtype", "float16"});
                  },
                  2, "model.safetensors: tensor 'ln_f.weight' holds 100000, beyond the range of float16"));
  // `--activations` files: F32 tensors of `value`, `hidden` [1, n, 16, 8] or hidden.<l> [n, 16, 8].
  const auto activations = [](const fs::path& d, const std::vector<std::string>& names, int n, float value) {
    std::string header, data;
    for (const auto& name : names) {
      const std::string shape = (name == "hidden" ? "[1, " : "[") + std::to_string(n) + ", 16, 8]";
      const auto begin = data.size();
      for (int i = 0; i < n * 16 * 8; ++i) data.append(reinterpret_cast<const char*>(&value), sizeof value);
      header += std::string(header.empty() ? "{" : ", ") + "\"" + name + "\": {\"dtype\": \"F32\", \"shape\": " + shape +
                ", \"data_offsets\": [" + std::to_string(begin) + ", " + std::to_string(data.size()) + "]}";
    }
    writeFile(d / "act.safetensors", safetensorsBytes(header + "}", data));
    return Args{"analyze", "--activations", (d / "act.safetensors").string()};
  };
  c.push_back(row("activations-no-sequences", [=](const fs::path& d) { return activations(d, {"hidden"}, 0, 0.5f); },
                  2, "act.safetensors: holds no sequences: its hidden states are [1, 0, 16, 8] [L, N, T, d], N = 0"));
  c.push_back(row("activations-gap", [=](const fs::path& d) { return activations(d, {"hidden.0", "hidden.1", "hidden.3"}, 2, 0.5f); },
                  2, "act.safetensors: has no 'hidden.2' but has hidden.3: the hidden states must be numbered 0, 1, 2, ... without a gap"));
  c.push_back(row("activations-bad-name", [=](const fs::path& d) { return activations(d, {"hidden.0", "hidden.01"}, 2, 0.5f); },
                  2, "act.safetensors: 'hidden.01' is not a hidden state's name"));
  c.push_back(row("activations-overflow", [=](const fs::path& d) { return activations(d, {"hidden"}, 2, 1e30f); },
                  2, "act.safetensors: holds values up to 1e+30 at hidden state 0 (in sequences 0..1): finite, but their squares overflow float32"));
  c.push_back(row("activations-one-window", [=](const fs::path& d) { return activations(d, {"hidden"}, 1, 0.5f); },
                  0, "act.safetensors: one window only: a single sequence is its own context mean, so the report's context and residual are zero"));
  c.push_back(row("shard-past-num-seqs", [](const fs::path&) { return onRandomIds(fixtureModel("tiny-gpt2"), {"--shard", "5/8"}); },
                  2, "--shard: 5/8 leaves this shard no window: it reads windows 5, 13, ... of the --num-seqs 2 (0..1)"));
  c.push_back(row("windows-per-document-negative",
                  [](const fs::path& d) { return onText(textFile(d, "a.txt", prose(500)), {"--windows-per-document", "-3"}); },
                  2, "--windows-per-document: must not be negative (got -3; 0: no limit)"));
  c.push_back(row("heads-thresholds-contradictory",
                  [](const fs::path&) {
                    return onRandomIds(fixtureModel("tiny-gpt2"), {"--heads", "--local-below", "0.9", "--uniform-above", "0.1"});
                  },
                  2, "--local-below: 0.9 is above --uniform-above 0.1: a head would be local and uniform at once"));
  c.push_back(row("screenot-k-default-cut",
                  [](const fs::path&) {
                    return Args{"analyze", "--model", fixtureModel("tiny-gpt2").string(), "--corpus", "random", "--num-seqs", "2",
                                "--seq-len", "16"};
                  },
                  0, "", [](const fs::path& out) {
                    EXPECT_EQ(nlohmann::json::parse(readFile(out / "summary.json"))["report"]["screenot_k"], 6);  // 2k + 1 < 15
                  }));
  c.push_back(row("random-model-too-large", [](const fs::path&) { return Args{"random-model", "--layers", "1000000000"}; }, 2,
                  "--layers: 1000000000 is more than 4096"));
  c.push_back(row("random-model-width-unsaid",
                  [](const fs::path&) { return Args{"random-model", "--arch", "bloom", "--dim", "32", "--heads", "4", "--mlp", "100"}; },
                  2, "--mlp: 100: a BLOOM config has no MLP width of its own (it reads back as 128)"));
  c.push_back(row("random-model-sizes-refused",
                  [](const fs::path&) { return Args{"random-model", "--arch", "llama", "--dim", "72", "--heads", "8"}; }, 2,
                  "random-model: the sizes give a config the Llama reader refuses"));
  c.push_back(row("bench-seq-len-beyond-positions",
                  [](const fs::path&) { return Args{"bench", "--model", fixtureModel("tiny-gpt2").string(), "--seq-len", "100000"}; },
                  2, "--seq-len: 100000 exceeds the model's 128 learned positions"));
  c.push_back(row("bench-work-dir-foreign",
                  [](const fs::path& d) {
                    std::filesystem::create_directories(d / "w/gpt2-small");
                    writeFile(d / "w/gpt2-small/config.json", R"({"model_type": "llama"})");
                    writeFile(d / "w/gpt2-small/model.safetensors", "mine");
                    return Args{"bench", "--shape", "gpt2-small", "--work-dir", (d / "w").string()};
                  },
                  2, "gpt2-small' holds files bench did not write; it writes the random gpt2-small checkpoint there, so choose another --work-dir",
                  [](const fs::path& out) { EXPECT_EQ(readFile(out.parent_path() / "w/gpt2-small/model.safetensors"), "mine"); }));
  // The bundled model's tokenizer.json, edited.
  const auto editedTokenizer = [](const fs::path& d, const std::function<void(nlohmann::json&)>& edit) {
    fs::copy(kDefaultModel, d / "m", fs::copy_options::recursive);
    auto t = nlohmann::json::parse(readFile(d / "m/tokenizer.json"));
    edit(t);
    writeFile(d / "m/tokenizer.json", t.dump());
    return d / "m";
  };
  c.push_back(row("tokenizer-no-unk-drops",
                  [=](const fs::path& d) {
                    const auto m = editedTokenizer(d, [](nlohmann::json& t) { t["model"].erase("unk_token"); });
                    return with(onText(textFile(d, "a.txt", "caf\xC3\xA9 " + prose(500) + " na\xC3\xAFve r\xC3\xA9sum")),
                                {"--model", m.string()});
                  },
                  0, "tokenizer.json: 3 characters of the text read are outside the vocabulary and were dropped from the ids: there is no unk_token"));
  c.push_back(row("tokenizer-wordpiece-no-pretokenizer",
                  [=](const fs::path& d) {
                    const auto m = editedTokenizer(d, [](nlohmann::json& t) {
                      t["model"]["type"] = "WordPiece";
                      t["model"].erase("merges");
                    });
                    std::string rows;
                    for (int i = 0; i < 40; ++i) rows += "{\"text\": \"a\"}\n";
                    rows += "{\"text\": \"" + std::string(200, 'a') + "\"}\n";
                    writeFile(d / "c.jsonl", rows);
                    return with(onText(d / "c.jsonl"), {"--model", m.string(), "--cross-documents"});
                  },
                  0, "tokenizer.json: a WordPiece model without a pre_tokenizer takes each text as one word"));
  c.push_back(row("eval-addition-out-directory",
                  [](const fs::path& d) {
                    fs::create_directories(d / "out");  // checked before the model is: a refusal costs nothing
                    return Args{"eval-addition", "--model", kDefaultModel.string(), "--max-digits", "2", "--samples", "5"};
                  },
                  2, "out: is a directory, but --out is a file; give the name of a file in it"));
  c.push_back(row("merge-model-revision",
                  [](const fs::path& d) {
                    // merge --model takes --revision as analyze does; the hub name is resolved before the states are read.
                    return Args{"merge", (d / "state.safetensors").string(), "--model", "org/not-cached", "--revision", "dev"};
                  },
                  2, "org/not-cached: not a directory, and not in the Hugging Face cache"));
  c.push_back(row("train-force-foreign-model",
                  [=](const fs::path& d) {
                    const auto hf = fs::path(POSGEOM_SOURCE_DIR) / "tests/fixtures/hf/hf-gpt2";
                    fs::create_directories(d / "out");
                    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(hf / f, d / "out" / f);
                    writeFile(d / "out/tokenizer.json", "{}");
                    return Args{"train", "--config", trainToml(d), "--force"};
                  },
                  2, "out: holds a model that posgeom's train did not write (no train_config.json or checkpoint.safetensors",
                  [](const fs::path& out) { EXPECT_TRUE(fs::exists(out / "model.safetensors")) << out; }));
  c.push_back(row("train-resume-stop-after-not-past",
                  [=](const fs::path& d) { return with(stoppedTraining(d), {"--stop-after", "10"}); },
                  2, "--stop-after: 10 is not past step 10, where the checkpoint "));
  return c;
}

class BadInputRow : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputRow, GetsItsDocumentedAnswer) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2");
  const auto& c = GetParam();
  ScratchDir s;
  auto args = c.setup(s.path());
  const bool resumes = std::find(args.begin(), args.end(), "--resume") != args.end();
  const bool saved_before = fs::exists(s / ".out.posgeom-work/state.safetensors");
  const bool locked_before = fs::exists(s / ".out.posgeom-lock");
  std::set<std::string> there_before;
  if (fs::exists(s / "out"))
    for (const auto& e : fs::directory_iterator(s / "out")) there_before.insert(e.path().filename().string());
  if (!resumes) args.insert(args.end(), {"--out", (s / "out").string()});
  args.push_back("-q");
  // A written file of more than the limit fails with EFBIG, as on a full disk.
  const auto r = c.file_size_limit.empty()
                     ? runPosgeom(args)
                     : runProgram("/bin/sh", [&] {
                         Args sh{"-c", "ulimit -f " + c.file_size_limit + " && exec \"$0\" \"$@\"", POSGEOM_BINARY};
                         sh.insert(sh.end(), args.begin(), args.end());
                         return sh;
                       }());
  ASSERT_EQ(r.exit_code, c.exit_code) << r.err;
  if (c.exit_code == 2) {
    ASSERT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("posgeom: error: ", 0), 0u) << r.err;
    // Nothing half-written: no report, no temporary file; a state only where one was saved before.
    if (fs::exists(s / "out"))
      for (const auto& e : fs::directory_iterator(s / "out")) {
        const auto name = e.path().filename().string();
        EXPECT_TRUE(there_before.count(name) || (resumes && name == "state.safetensors")) << "left behind: " << name;
      }
    // Nor beside it: the lock goes with the run, the work directory with a run that saved nothing.
    if (!locked_before) {
      EXPECT_FALSE(fs::exists(s / ".out.posgeom-lock"));
    }
    if (!saved_before) {
      EXPECT_FALSE(fs::exists(s / ".out.posgeom-work"));
    }
  } else {
    EXPECT_TRUE(fs::exists(s / "out/summary.json"));
  }
  EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  if (c.check) c.check(s / "out");
}

INSTANTIATE_TEST_SUITE_P(Rows, BadInputRow, ::testing::ValuesIn(cases()), [](const auto& row_info) {
  std::string name = row_info.param.id;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
});

TEST(BadInputTable, EveryRowHasACaseAndEveryCaseARow) {
  std::ifstream doc(fs::path(POSGEOM_SOURCE_DIR) / "docs/bad-input.md");
  ASSERT_TRUE(doc) << "docs/bad-input.md is missing";
  std::set<std::string> rows, tested;
  for (std::string line; std::getline(doc, line);)
    if (line.rfind("| `", 0) == 0) rows.insert(line.substr(3, line.find('`', 3) - 3));
  for (const auto& c : cases()) tested.insert(c.id);
  EXPECT_EQ(rows, tested);
  EXPECT_GE(rows.size(), 30u);
}

TEST(BadInputTable, TheSuggestedBatchSizeFits) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  // The estimate counts the windows a batch will really hold: at most --num-seqs. 1 GB
  // leaves a few hundred windows beside either build's runtime allowance (400 or 640 MiB).
  const auto args = onRandomIds(fixtureModel("tiny-gpt2"), {"--seq-len", "128", "--max-memory", "1G", "-q", "--num-seqs", "100000"});
  const auto r = runPosgeom(with(args, {"--batch-size", "100000", "--out", (s / "a").string()}));
  ASSERT_EQ(r.exit_code, 2) << r.err;
  const auto at = r.err.find("--batch-size ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const long fits = std::stol(r.err.substr(at + 13));
  EXPECT_GT(fits, 1);
  EXPECT_LT(fits, 100000);
  // It fits (one batch of it runs), and one more window would not.
  const auto ok = runPosgeom(with(args, {"--batch-size", std::to_string(fits), "--num-seqs", std::to_string(fits), "--out", (s / "b").string()}));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(runPosgeom(with(args, {"--batch-size", std::to_string(fits + 1), "--out", (s / "c").string()})).exit_code, 2);
}

}  // namespace
}  // namespace posgeom::testing
