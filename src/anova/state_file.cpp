#include "posgeom/anova/state_file.h"

#include <cstring>

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"

namespace posgeom::anova {
namespace {

constexpr const char* kFormat = "posgeom-state-1";

template <typename Scalar>
using RowMajor = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Written straight from the state into the file's row-major layout: a state as large as
// the accumulator's is not copied again to be saved.
void addMatrix(io::SafetensorsWriter& w, const std::string& name, const Eigen::MatrixXd& m) {
  w.addDeferred(name, io::DType::kF64, {m.rows(), m.cols()}, [&m](std::byte* out) {
    Eigen::Map<RowMajor<double>>(reinterpret_cast<double*>(out), m.rows(), m.cols()) = m;
  });
}

// Samples of activations that were float32 (or narrower) to begin with: half the bytes.
void addFloatMatrix(io::SafetensorsWriter& w, const std::string& name, const Eigen::MatrixXd& m) {
  w.addDeferred(name, io::DType::kF32, {m.rows(), m.cols()}, [&m](std::byte* out) {
    Eigen::Map<RowMajor<float>>(reinterpret_cast<float*>(out), m.rows(), m.cols()) = m.cast<float>();
  });
}

Eigen::MatrixXd readMatrix(const io::SafetensorsFile& f, const std::string& name) {
  const auto& v = f.get(name);
  if ((v.dtype != io::DType::kF64 && v.dtype != io::DType::kF32) || v.shape.size() != 2)
    throw InputError(f.path().string(), "tensor '" + name + "' is not a F64 or F32 matrix");
  if (v.dtype == io::DType::kF32) {
    RowMajor<float> m(v.shape[0], v.shape[1]);
    if (v.nbytes) std::memcpy(m.data(), v.data, v.nbytes);
    return m.cast<double>();
  }
  RowMajor<double> m(v.shape[0], v.shape[1]);
  if (v.nbytes) std::memcpy(m.data(), v.data, v.nbytes);
  return m;
}

}  // namespace

void saveState(const AnalysisState& state, const std::filesystem::path& path) {
  io::SafetensorsWriter w;
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& s : state.layers) {
    const std::string p = "layer." + std::to_string(s.layer) + ".";
    addMatrix(w, p + "position_sum", s.position_sum);
    if (s.hasSecondMoment()) addMatrix(w, p + "second_moment", s.second_moment);
    addMatrix(w, p + "context_second_moment", s.context_second_moment);
    addMatrix(w, p + "context_means", s.context_means);
    addMatrix(w, p + "reservoir", s.reservoir);
    nlohmann::json layer = {{"layer", s.layer},
                            {"sequences", s.sequences},
                            {"norm_sum", s.norm_sum},
                            {"previous_cosine_sum", s.previous_cosine_sum},
                            {"context_windows", s.context_windows},
                            {"context_labels", s.context_labels},
                            {"reservoir_windows", s.reservoir_windows}};
    if (s.attention_input_sum.size()) {
      addMatrix(w, p + "attention_input_sum", s.attention_input_sum);
      addFloatMatrix(w, p + "attention_samples", s.attention_samples);
      layer["attention_sample_windows"] = s.attention_sample_windows;
    }
    layers.push_back(std::move(layer));
  }
  const nlohmann::json meta = {{"format", kFormat}, {"settings", state.settings}, {"windows", state.windows}, {"layers", layers}};
  w.setMetadata("posgeom", meta.dump());
  w.write(path);
}

AnalysisState loadState(const std::filesystem::path& path) {
  const auto f = io::SafetensorsFile::open(path);
  const auto it = f.metadata().find("posgeom");
  const auto meta = it == f.metadata().end() ? nlohmann::json() : nlohmann::json::parse(it->second, nullptr, false);
  if (!meta.is_object() || meta.value("format", "") != kFormat) throw InputError(path.string(), "not a posgeom state file");
  AnalysisState state;
  state.settings = meta.at("settings");
  state.windows = meta.at("windows").get<int64_t>();
  for (const auto& l : meta.at("layers")) {
    LayerStatistics s;
    s.layer = l.at("layer").get<int64_t>();
    const std::string p = "layer." + std::to_string(s.layer) + ".";
    s.sequences = l.at("sequences").get<int64_t>();
    s.norm_sum = l.at("norm_sum").get<double>();
    s.previous_cosine_sum = l.at("previous_cosine_sum").get<double>();
    s.context_windows = l.at("context_windows").get<std::vector<int64_t>>();
    s.context_labels = l.at("context_labels").get<std::vector<std::string>>();
    s.reservoir_windows = l.at("reservoir_windows").get<std::vector<int64_t>>();
    s.position_sum = readMatrix(f, p + "position_sum");
    if (f.find(p + "second_moment")) s.second_moment = readMatrix(f, p + "second_moment");
    s.context_second_moment = readMatrix(f, p + "context_second_moment");
    s.context_means = readMatrix(f, p + "context_means");
    s.reservoir = readMatrix(f, p + "reservoir");
    if (f.find(p + "attention_input_sum")) {
      s.attention_input_sum = readMatrix(f, p + "attention_input_sum");
      s.attention_samples = readMatrix(f, p + "attention_samples");
      s.attention_sample_windows = l.at("attention_sample_windows").get<std::vector<int64_t>>();
    }
    state.layers.push_back(std::move(s));
  }
  return state;
}

}  // namespace posgeom::anova
