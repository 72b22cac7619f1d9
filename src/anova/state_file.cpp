#include "posgeom/anova/state_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "posgeom/base/error.h"
#include "posgeom/io/mapped_file.h"
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

// A column [n, 1], written from the vector itself (a MatrixXd made of it would be a
// temporary gone before the deferred write).
void addColumn(io::SafetensorsWriter& w, const std::string& name, const Eigen::VectorXd& v) {
  w.addDeferred(name, io::DType::kF64, {v.size(), 1}, [&v](std::byte* out) {
    if (v.size()) std::memcpy(out, v.data(), static_cast<std::size_t>(v.size()) * sizeof(double));
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

nlohmann::json parseMeta(const io::SafetensorsFile& f) {
  const auto it = f.metadata().find("posgeom");
  const auto meta = it == f.metadata().end() ? nlohmann::json() : nlohmann::json::parse(it->second, nullptr, false);
  if (!meta.is_object() || meta.value("format", "") != kFormat) throw InputError(f.path().string(), "not a posgeom state file");
  return meta;
}

// One layer's tensors (deferred: `s` must outlive the write) and its record.
nlohmann::json addLayer(io::SafetensorsWriter& w, const LayerStatistics& s) {
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
  if (s.layer_cosines) layer["earlier_cosine_sums"] = std::vector<double>(s.earlier_cosine_sums.data(), s.earlier_cosine_sums.data() + s.earlier_cosine_sums.size());
  if (!s.magnitudes.empty()) {
    const auto& m = s.magnitudes;
    addMatrix(w, p + "position_abs_max", m.position_abs_max);
    w.addDeferred(p + "max_where", io::DType::kF64, {3, m.dim()}, [&m](std::byte* out) {
      auto* row = reinterpret_cast<double*>(out);
      for (const auto* v : {&m.max_window, &m.max_position, &m.max_token})
        for (const int64_t x : *v) *row++ = static_cast<double>(x);  // exact: windows, positions and ids are below 2^53
    });
    w.addDeferred(p + "magnitude_counts", io::DType::kF64, {1, static_cast<int64_t>(m.counts.size())}, [&m](std::byte* out) {
      if (!m.counts.empty()) std::memcpy(out, m.counts.data(), m.counts.size() * sizeof(double));
    });
    addMatrix(w, p + "skipped_position_sum", m.skipped_position_sum);
    addColumn(w, p + "position_square_sum", m.position_square_sum);
    layer["context_square_sum"] = m.context_square_sum;
    layer["context_square_sum_from_1"] = m.context_square_sum_from_1;
  }
  if (s.attention_input_sum.size()) {
    addMatrix(w, p + "attention_input_sum", s.attention_input_sum);
    addFloatMatrix(w, p + "attention_samples", s.attention_samples);
    layer["attention_sample_windows"] = s.attention_sample_windows;
  }
  return layer;
}

// A layer saved on its own: its bytes copied as they are, its pages let go once copied.
nlohmann::json addLayerFile(io::SafetensorsWriter& w, const io::SafetensorsFile& f) {
  const auto meta = parseMeta(f);
  if (meta.at("layers").size() != 1) throw InputError(f.path().string(), "holds more than one layer");
  for (const auto& [name, view] : f.tensors())
    w.addDeferred(name, view.dtype, view.shape, [&view](std::byte* out) {
      if (view.nbytes) std::memcpy(out, view.data, view.nbytes);
      io::dropMappedPages(view.data, view.nbytes);
    });
  return meta.at("layers").front();
}

void writeState(io::SafetensorsWriter& w, const AnalysisState& state, nlohmann::json layers, const std::filesystem::path& path) {
  const nlohmann::json meta = {{"format", kFormat}, {"settings", state.settings}, {"windows", state.windows}, {"layers", std::move(layers)}};
  w.setMetadata("posgeom", meta.dump());
  w.write(path);
}

// The magnitude statistics of a layer whose position_abs_max is in the file, checked
// against its other tensors' shapes.
void readMagnitudes(const io::SafetensorsFile& f, const nlohmann::json& l, const std::string& p, LayerStatistics& s) {
  auto& m = s.magnitudes;
  m.position_abs_max = readMatrix(f, p + "position_abs_max");
  const auto where = readMatrix(f, p + "max_where");
  const auto counts = readMatrix(f, p + "magnitude_counts");
  m.skipped_position_sum = readMatrix(f, p + "skipped_position_sum");
  const auto squares = readMatrix(f, p + "position_square_sum");  // a column, checked before it becomes a vector
  const int64_t d = m.dim(), t = m.seqLen();
  const auto name = [&] { return "the massive-activation tensors of layer " + std::to_string(s.layer); };
  if (where.rows() != 3 || where.cols() != d || counts.rows() != 1 || counts.cols() != kMagnitudeBins ||
      m.skipped_position_sum.cols() != d || m.skipped_position_sum.rows() >= t || squares.rows() != t || squares.cols() != 1 ||
      d != s.dim() || t - m.skipped_position_sum.rows() != s.positions())
    throw InputError(f.path().string(), name() + " do not fit its statistics");
  // Maxima, counts and squares are finite and not negative in any state posgeom wrote (a NaN
  // would not even sort).
  if (!(m.position_abs_max.array() >= 0).all() || !m.position_abs_max.allFinite() || !(counts.array() >= 0).all() ||
      !counts.allFinite() || !(squares.array() >= 0).all() || !squares.allFinite() || !m.skipped_position_sum.allFinite())
    throw InputError(f.path().string(), name() + " hold values no run gives (negative, NaN or infinite)");
  m.position_square_sum = squares.col(0);
  // Windows, positions and ids: whole numbers from -1 (none) up, below 2^53; anything else
  // is not a state posgeom wrote (and would not convert).
  const bool whole = (where.array() == where.array().floor()).all() && (where.array() >= -1).all() && (where.array() < 9007199254740992.0).all();
  if (!whole) throw InputError(f.path().string(), "tensor 'layer." + std::to_string(s.layer) + ".max_where' holds values that are not windows, positions or token ids");
  for (auto [row, v] : {std::pair{0, &m.max_window}, std::pair{1, &m.max_position}, std::pair{2, &m.max_token}})
    for (Eigen::Index i = 0; i < d; ++i) v->push_back(static_cast<int64_t>(where(row, i)));
  m.counts.assign(counts.data(), counts.data() + counts.size());
  m.context_square_sum = l.at("context_square_sum").get<double>();
  m.context_square_sum_from_1 = l.at("context_square_sum_from_1").get<double>();
}

// A cosine sum per earlier hidden state, each within the tokens it sums over.
void readLayerCosines(const io::SafetensorsFile& f, const nlohmann::json& l, LayerStatistics& s) {
  const auto& sums = l.at("earlier_cosine_sums");
  const double tokens = static_cast<double>(s.sequences) * static_cast<double>(s.positions());
  bool fits = sums.is_array() && static_cast<int64_t>(sums.size()) == s.layer;
  s.earlier_cosine_sums.resize(fits ? s.layer : 0);
  for (std::size_t i = 0; fits && i < sums.size(); ++i) {
    // float32 products of float32 unit vectors: a cosine of 1 may sum a hair past the tokens
    fits = sums[i].is_number() && std::abs(sums[i].get<double>()) <= tokens * (1 + 1e-5);
    if (fits) s.earlier_cosine_sums[static_cast<Eigen::Index>(i)] = sums[i].get<double>();
  }
  if (!fits)
    throw InputError(f.path().string(), "layer " + std::to_string(s.layer) +
                                            "'s earlier_cosine_sums is not one sum of cosines per earlier hidden state, each "
                                            "within its " + std::to_string(static_cast<int64_t>(tokens)) + " tokens");
  s.layer_cosines = true;
}

LayerStatistics readLayer(const io::SafetensorsFile& f, const nlohmann::json& l) {
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
  if (f.find(p + "position_abs_max")) readMagnitudes(f, l, p, s);
  if (l.contains("earlier_cosine_sums")) readLayerCosines(f, l, s);
  if (f.find(p + "attention_input_sum")) {
    s.attention_input_sum = readMatrix(f, p + "attention_input_sum");
    s.attention_samples = readMatrix(f, p + "attention_samples");
    s.attention_sample_windows = l.at("attention_sample_windows").get<std::vector<int64_t>>();
  }
  return s;
}

}  // namespace

LayerShape shapeOf(const LayerStatistics& layer) {
  return {layer.layer, layer.positions(), layer.dim(), layer.hasSecondMoment(), layer.attention_input_sum.size() > 0};
}

void saveState(const AnalysisState& state, const std::filesystem::path& path) {
  io::SafetensorsWriter w;
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& s : state.layers) layers.push_back(addLayer(w, s));
  writeState(w, state, std::move(layers), path);
}

void saveState(const AnalysisState& state, const std::vector<std::filesystem::path>& layer_files,
               const std::filesystem::path& path) {
  io::SafetensorsWriter w;
  std::vector<io::SafetensorsFile> files;
  files.reserve(layer_files.size());  // the writer's fills point into them
  std::vector<std::pair<int64_t, nlohmann::json>> records;
  for (const auto& s : state.layers) records.emplace_back(s.layer, addLayer(w, s));
  for (const auto& file : layer_files) {
    files.push_back(io::SafetensorsFile::open(file));
    auto record = addLayerFile(w, files.back());
    records.emplace_back(record.at("layer").get<int64_t>(), std::move(record));
  }
  std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  nlohmann::json layers = nlohmann::json::array();
  for (auto& [index, record] : records) layers.push_back(std::move(record));
  writeState(w, state, std::move(layers), path);
}

struct StateReader::Impl {
  io::SafetensorsFile file;
  nlohmann::json meta;
};

StateReader::StateReader(const std::filesystem::path& path) : impl_(std::make_unique<Impl>()) {
  impl_->file = io::SafetensorsFile::open(path);
  impl_->meta = parseMeta(impl_->file);
  impl_->meta.at("settings");
  impl_->meta.at("windows").get<int64_t>();
}

StateReader::~StateReader() = default;
const nlohmann::json& StateReader::settings() const { return impl_->meta.at("settings"); }
int64_t StateReader::windows() const { return impl_->meta.at("windows").get<int64_t>(); }
std::size_t StateReader::layerCount() const { return impl_->meta.at("layers").size(); }
LayerShape StateReader::layerShape(std::size_t i) const {
  LayerShape shape;
  shape.layer = impl_->meta.at("layers").at(i).at("layer").get<int64_t>();
  const std::string p = "layer." + std::to_string(shape.layer) + ".";
  const auto& sums = impl_->file.get(p + "position_sum");
  if (sums.shape.size() != 2) throw InputError(impl_->file.path().string(), "tensor '" + p + "position_sum' is not a matrix");
  shape.positions = sums.shape[0];
  shape.dim = sums.shape[1];
  shape.second_moment = impl_->file.find(p + "second_moment") != nullptr;
  shape.attention_inputs = impl_->file.find(p + "attention_input_sum") != nullptr;
  return shape;
}

LayerStatistics StateReader::layer(std::size_t i) const {
  auto s = readLayer(impl_->file, impl_->meta.at("layers").at(i));
  for (const auto& [name, view] : impl_->file.tensors())
    if (name.rfind("layer." + std::to_string(s.layer) + ".", 0) == 0) io::dropMappedPages(view.data, view.nbytes);
  return s;
}

AnalysisState loadState(const std::filesystem::path& path) {
  const StateReader reader(path);
  AnalysisState state;
  state.settings = reader.settings();
  state.windows = reader.windows();
  for (std::size_t i = 0; i < reader.layerCount(); ++i) state.layers.push_back(reader.layer(i));
  return state;
}

}  // namespace posgeom::anova
