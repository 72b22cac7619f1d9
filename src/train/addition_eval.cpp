#include "posgeom/train/addition_eval.h"

#include <cstdio>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/io/json_file.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/tokenize/tokenizer.h"
#include "posgeom/train/training_data.h"

namespace posgeom::train {
namespace {
namespace fs = std::filesystem;

const char* const kAdditionModel = "eval-addition measures a model trained with [data] task = \"addition\"";

// Before the model loads: a model trained on text would score 0.000 with exit 0.
void requireAdditionTraining(const fs::path& model_dir) {
  const auto config = model_dir / "train_config.json";
  if (fs::is_regular_file(config)) {
    const auto data = io::readJsonFile(config).value("data", nlohmann::json::object());
    const std::string task = data.is_object() && data.value("task", nlohmann::json()).is_string() ? data["task"].get<std::string>() : "text";
    if (task != "addition")
      throw InputError(model_dir.string(), "was trained with [data] task = \"" + task + "\" (its train_config.json); " + kAdditionModel);
  }
  // What tokenize::loadTokenizer reads; its own message advises a --tokenizer option eval-addition does not have.
  if (!fs::exists(model_dir / "tokenizer.json") && !(fs::exists(model_dir / "vocab.json") && fs::exists(model_dir / "merges.txt")) &&
      !fs::exists(model_dir / "vocab.txt") && !fs::exists(model_dir / "tokenizer.model"))
    throw InputError(model_dir.string(), std::string("has no tokenizer (tokenizer.json, as posgeom train writes it); ") + kAdditionModel);
}

// Every symbol of a problem must be one known token, as in the addition task's vocabulary.
void requireAdditionSymbols(const fs::path& model_dir, const tokenize::Tokenizer& tokenizer) {
  for (const std::string symbol : {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "+", "=", "\n"}) {
    tokenize::EncodeStats stats;
    if (tokenizer.encode(symbol, stats).size() != 1 || stats.unknown_tokens > 0)
      throw InputError(model_dir.string(), "its tokenizer has no token of its own for '" + (symbol == "\n" ? std::string("\\n") : symbol) +
                                               "'; " + kAdditionModel);
  }
}

}  // namespace

std::vector<AdditionAccuracy> evaluateAddition(const std::filesystem::path& model_dir, int64_t max_digits, int64_t samples,
                                               uint64_t seed, const runtime::DeviceSpec& device) {
  if (max_digits < 1 || max_digits > 18 || samples < 1) throw InputError("eval-addition", "needs 1 <= --max-digits <= 18 and --samples >= 1");
  std::unique_ptr<tokenize::Tokenizer> tokenizer;
  if (std::filesystem::is_directory(model_dir)) {  // else the model's loader says what is wrong
    requireAdditionTraining(model_dir);
    tokenizer = tokenize::loadTokenizer(model_dir);
    requireAdditionSymbols(model_dir, *tokenizer);
  }
  const auto loaded = model::loadModel(model_dir, model::Numerics::of(runtime::ComputeDtype::kFloat32, device));
  if (!tokenizer) tokenizer = tokenize::loadTokenizer(model_dir);
  auto encode = [&](const std::string& text) {
    tokenize::EncodeStats stats;
    const auto ids = tokenizer->encode(text, stats);
    return std::vector<int64_t>(ids.begin(), ids.end());
  };
  const AdditionFormat format = trainedAdditionFormat(model_dir);  // as the model was trained
  const c10::NoGradGuard no_grad;
  std::vector<AdditionAccuracy> out;
  uint64_t state = seed;
  for (int64_t digits = 1; digits <= max_digits; ++digits) {
    std::vector<std::vector<int64_t>> prompts, answers;
    for (int64_t s = 0; s < samples; ++s) {
      const auto [a, b] = randomOperands(state, digits, digits, format.carries);
      const std::string problem = additionProblem(a, b, format);
      const auto eq = problem.find('=');
      prompts.push_back(encode("\n" + problem.substr(0, eq + 1)));
      answers.push_back(encode(problem.substr(eq + 1)));  // the sum and "\n"
    }
    const int64_t prompt_len = static_cast<int64_t>(prompts[0].size()), steps = digits + 2;
    const auto& config = loaded.model->config();
    if (config.max_positions > 0 && prompt_len + steps > config.max_positions)
      throw InputError(option::kMaxDigits, std::to_string(digits) + "-digit problems need " + std::to_string(prompt_len + steps) +
                                           " positions; the model has " + std::to_string(config.max_positions));
    std::vector<int64_t> flat;
    for (const auto& p : prompts) flat.insert(flat.end(), p.begin(), p.end());
    auto ids = at::tensor(flat, at::TensorOptions().dtype(at::kLong)).view({samples, prompt_len});
    for (int64_t step = 0; step < steps; ++step) {
      model::ForwardRequest r;
      r.ids = ids;
      r.want_logits = true;
      const auto logits = loaded.model->forward(r).logits;
      const auto next = logits.select(1, ids.size(1) - 1).argmax(-1).to(at::kCPU).view({samples, 1});
      ids = at::cat({ids, next}, 1);
    }
    const auto generated = ids.narrow(1, prompt_len, steps).contiguous();
    AdditionAccuracy acc{digits, samples, 0};
    for (int64_t s = 0; s < samples; ++s) {
      const auto& want = answers[static_cast<std::size_t>(s)];
      bool same = static_cast<int64_t>(want.size()) <= steps;
      for (std::size_t i = 0; same && i < want.size(); ++i) same = generated[s][static_cast<int64_t>(i)].item<int64_t>() == want[i];
      acc.correct += same;
    }
    out.push_back(acc);
  }
  return out;
}

std::string additionTable(const std::vector<AdditionAccuracy>& rows) {
  std::string out = "digits  accuracy\n";
  for (const auto& r : rows) {
    char line[96];
    std::snprintf(line, sizeof(line), "%6lld  %8.3f\n", static_cast<long long>(r.digits), r.accuracy());
    out += line;
  }
  return out;
}

std::string additionCsv(const std::vector<AdditionAccuracy>& rows) {
  std::string csv = "digits,samples,correct,accuracy\n";
  for (const auto& r : rows)
    csv += std::to_string(r.digits) + "," + std::to_string(r.samples) + "," + std::to_string(r.correct) + "," +
           std::to_string(r.accuracy()) + "\n";
  return csv;
}

}  // namespace posgeom::train
