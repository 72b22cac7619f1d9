#include "posgeom/train/addition_eval.h"

#include <cstdio>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "posgeom/base/error.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/tokenize/tokenizer.h"
#include "posgeom/train/training_data.h"

namespace posgeom::train {

std::vector<AdditionAccuracy> evaluateAddition(const std::filesystem::path& model_dir, int64_t max_digits, int64_t samples,
                                               uint64_t seed, const std::string& device) {
  if (max_digits < 1 || max_digits > 18 || samples < 1) throw InputError("eval-addition", "needs 1 <= --max-digits <= 18 and --samples >= 1");
  const auto loaded = model::loadModel(model_dir, model::Numerics::parse("float32", device));
  const auto tokenizer = tokenize::loadTokenizer(model_dir);
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
      throw InputError("--max-digits", std::to_string(digits) + "-digit problems need " + std::to_string(prompt_len + steps) +
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
