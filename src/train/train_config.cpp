#include "posgeom/train/train_config.h"

#include <cmath>
#include <cstdio>
#include <type_traits>

#include "posgeom/base/error.h"
#include "posgeom/io/toml_file.h"

namespace posgeom::train {
namespace fs = std::filesystem;
namespace {

using Json = nlohmann::ordered_json;

std::string text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

// Reads the keys of one table into fields; anything else is an error.
class TableReader {
 public:
  TableReader(const Json& root, const std::string& table, const std::string& file) : file_(file), table_(table) {
    if (!root.contains(table)) return;
    if (!root[table].is_object()) throw InputError(file, "[" + table + "] must be a table");
    json_ = root[table];
  }
  template <typename T>
  void read(const char* key, T& field) {
    if (!json_.contains(key)) return;
    // A whole-number field takes whole numbers only: converting a float (nan, 1e30) to an
    // integer is undefined behaviour (found by the toml_config fuzz target).
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      if (!json_[key].is_number_integer()) throw InputError(file_, "[" + table_ + "] " + key + " must be a whole number");
    // An unsigned field (the seed) would take -7 as 2^64 - 7.
    if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>)
      if (!json_[key].is_number_unsigned() && json_[key].get<int64_t>() < 0)
        throw InputError(file_, "[" + table_ + "] " + key + " must be a whole number >= 0 (got " + json_[key].dump() + ")");
    try {
      field = json_[key].get<T>();
    } catch (const std::exception&) {
      throw InputError(file_, "[" + table_ + "] " + key + " has the wrong type");
    }
    // inf or nan would train NaN to the end with exit 0.
    if constexpr (std::is_floating_point_v<T>)
      if (!std::isfinite(field)) throw InputError(file_, "[" + table_ + "] " + key + " must be a finite number (got " + text(field) + ")");
    seen_.push_back(key);
  }
  bool has(const char* key) const { return json_.contains(key); }
  void done() const {
    for (const auto& [key, value] : json_.items())
      if (std::find(seen_.begin(), seen_.end(), key) == seen_.end()) throw InputError(file_, "[" + table_ + "] has no key '" + key + "'");
  }
  void require(bool ok, const std::string& what) const {
    if (!ok) throw InputError(file_, "[" + table_ + "] " + what);
  }

 private:
  std::string file_, table_;
  Json json_ = Json::object();
  std::vector<std::string> seen_;
};

}  // namespace

TrainConfig readTrainConfig(const fs::path& path) {
  const Json root = io::readTomlOrJsonFile(path);
  const std::string file = path.string();
  for (const auto& [key, value] : root.items())
    if (key != "model" && key != "data" && key != "optim" && key != "run")
      throw InputError(file, "unknown table '" + key + "' (model, data, optim, run)");
  TrainConfig c;
  TableReader m(root, "model", file);
  m.read("layers", c.model.layers);
  m.read("heads", c.model.heads);
  m.read("width", c.model.width);
  m.read("context", c.model.context);
  m.read("positions", c.model.positions);
  m.read("dropout", c.model.dropout);
  m.read("bias", c.model.bias);
  m.read("position_encoding", c.model.position_encoding);
  m.done();
  m.require(c.model.layers > 0 && c.model.heads > 0 && c.model.width > 0 && c.model.context > 1, "needs positive layers, heads, width and context > 1");
  m.require(c.model.width % c.model.heads == 0, "width must be a multiple of heads");
  m.require(c.model.dropout >= 0 && c.model.dropout < 1, "dropout must be in [0, 1)");
  m.require(c.model.position_encoding == "learned" || c.model.position_encoding == "none" || c.model.position_encoding == "alibi",
            "position_encoding must be learned, none or alibi");
  if (c.model.positions == 0) c.model.positions = c.model.context;
  m.require(c.model.positions >= c.model.context, "positions must be at least the context");

  TableReader d(root, "data", file);
  std::string corpus;
  d.read("task", c.data.task);
  d.read("corpus", corpus);
  d.read("tokens", c.data.tokens);
  d.read("validation_fraction", c.data.validation_fraction);
  d.read("digits", c.data.digits);
  d.read("noise", c.data.noise);
  d.read("min_digits", c.data.min_digits);
  d.read("reverse_sum", c.data.reverse_sum);
  d.read("carries", c.data.carries);
  d.read("answer_loss", c.data.answer_loss);
  d.read("window", c.data.window);
  d.done();
  d.require(c.data.noise >= 0 && c.data.noise <= 2, "noise must be 0, 1 or 2");
  d.require(c.data.task == "text" || c.data.task == "addition", "task must be text or addition");
  if (c.data.task == "text") {
    d.require(!corpus.empty(), "needs a corpus for the text task");
    d.require(!c.data.answer_loss, "answer_loss is for the addition task");
    d.require(c.data.window == "stream", "window is for the addition task");
    c.data.corpus = fs::path(corpus).is_absolute() ? fs::path(corpus) : (path.parent_path() / corpus).lexically_normal();
    d.require(c.data.tokens == "char" || c.data.tokens == "bytes", "tokens must be char or bytes");
    d.require(c.data.validation_fraction > 0 && c.data.validation_fraction < 0.5, "validation_fraction must be in (0, 0.5)");
  } else {
    d.require(c.data.digits >= 1 && c.data.digits <= 18, "digits must be 1..18");
    d.require(c.data.min_digits >= 1 && c.data.min_digits <= c.data.digits, "min_digits must be 1..digits");
    d.require(c.data.window == "stream" || c.data.window == "problem", "window must be stream or problem");
    // "\n" a "+" b "=" sum "\n": the longest problem and its leading newline, inputs and target.
    const int64_t longest = 3 * c.data.digits + 5;
    if (c.data.window == "problem" && c.model.context < longest - 1)
      throw InputError(file, "[model] context " + std::to_string(c.model.context) + " is too short for one " +
                                 std::to_string(c.data.digits) + "-digit problem per window (needs " + std::to_string(longest - 1) + ")");
  }

  TableReader o(root, "optim", file);
  o.read("iterations", c.optim.iterations);
  o.read("batch_size", c.optim.batch_size);
  o.read("learning_rate", c.optim.learning_rate);
  o.read("min_learning_rate", c.optim.min_learning_rate);
  o.read("warmup", c.optim.warmup);
  o.read("decay", c.optim.decay);
  o.read("weight_decay", c.optim.weight_decay);
  o.read("beta1", c.optim.beta1);
  o.read("beta2", c.optim.beta2);
  o.read("grad_clip", c.optim.grad_clip);
  o.done();
  o.require(c.optim.iterations > 0 && c.optim.batch_size > 0 && c.optim.learning_rate > 0 && c.optim.warmup >= 0,
            "needs positive iterations, batch_size and learning_rate");
  o.require(c.optim.decay == "cosine" || c.optim.decay == "linear" || c.optim.decay == "constant", "decay must be cosine, linear or constant");
  o.require(c.optim.beta1 >= 0 && c.optim.beta1 < 1 && c.optim.beta2 >= 0 && c.optim.beta2 < 1, "beta1 and beta2 must be in [0, 1)");
  o.require(c.optim.weight_decay >= 0 && c.optim.grad_clip >= 0, "weight_decay and grad_clip must be >= 0 (grad_clip 0: none)");
  // The default floor (1e-4) is cut to a smaller learning rate; a floor the user set above it is refused.
  if (!o.has("min_learning_rate")) c.optim.min_learning_rate = std::min(c.optim.min_learning_rate, c.optim.learning_rate);
  o.require(c.optim.min_learning_rate >= 0 && c.optim.min_learning_rate <= c.optim.learning_rate,
            "min_learning_rate " + text(c.optim.min_learning_rate) + " must be in [0, learning_rate " + text(c.optim.learning_rate) + "]");

  TableReader r(root, "run", file);
  std::string out;
  r.read("seed", c.run.seed);
  r.read("eval_interval", c.run.eval_interval);
  r.read("eval_batches", c.run.eval_batches);
  r.read("checkpoint_interval", c.run.checkpoint_interval);
  r.read("save_every", c.run.save_every);
  r.read("out", out);
  r.done();
  r.require(c.run.eval_interval > 0 && c.run.eval_batches > 0 && c.run.checkpoint_interval > 0, "intervals must be positive");
  r.require(c.run.save_every >= 0, "save_every must be 0 (off) or a positive number of steps");
  if (!out.empty()) c.run.out = out;
  c.source = path;
  return c;
}

double learningRate(const OptimizerSpec& o, int64_t step) {
  if (step < o.warmup) return o.learning_rate * static_cast<double>(step + 1) / static_cast<double>(o.warmup + 1);
  if (o.decay == "constant") return o.learning_rate;
  const double span = static_cast<double>(std::max<int64_t>(1, o.iterations - o.warmup));
  const double progress = std::min(1.0, static_cast<double>(step - o.warmup) / span);
  const double shape = o.decay == "cosine" ? 0.5 * (1.0 + std::cos(M_PI * progress)) : 1.0 - progress;
  return o.min_learning_rate + shape * (o.learning_rate - o.min_learning_rate);
}

nlohmann::json TrainConfig::toJson() const {
  nlohmann::json j = {{"model", {{"layers", model.layers}, {"heads", model.heads}, {"width", model.width}, {"context", model.context},
                     {"positions", model.positions}, {"dropout", model.dropout}, {"bias", model.bias},
                     {"position_encoding", model.position_encoding}}},
          {"data", {{"task", data.task}, {"corpus", data.corpus.string()}, {"tokens", data.tokens},
                    {"validation_fraction", data.validation_fraction}, {"digits", data.digits}}},
          {"optim", {{"iterations", optim.iterations}, {"batch_size", optim.batch_size}, {"learning_rate", optim.learning_rate},
                     {"min_learning_rate", optim.min_learning_rate}, {"warmup", optim.warmup}, {"decay", optim.decay},
                     {"weight_decay", optim.weight_decay}, {"beta1", optim.beta1}, {"beta2", optim.beta2},
                     {"grad_clip", optim.grad_clip}}},
          {"run", {{"seed", run.seed}, {"eval_interval", run.eval_interval}, {"eval_batches", run.eval_batches},
                   {"checkpoint_interval", run.checkpoint_interval}, {"out", run.out.string()}}}};
  // Only when set: checkpoints of runs without it keep resuming.
  if (data.noise != 0) j["data"]["noise"] = data.noise;
  if (data.min_digits != 1) j["data"]["min_digits"] = data.min_digits;
  if (data.reverse_sum) j["data"]["reverse_sum"] = true;
  if (!data.carries) j["data"]["carries"] = false;
  if (data.answer_loss) j["data"]["answer_loss"] = true;
  if (data.window != "stream") j["data"]["window"] = data.window;
  if (run.save_every != 0) j["run"]["save_every"] = run.save_every;
  return j;
}

}  // namespace posgeom::train
