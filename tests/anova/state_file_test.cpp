#include "posgeom/anova/state_file.h"

#include <cmath>
#include <tuple>

#include "anova_fixtures.h"
#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(StateFile, RoundTripsEveryField) {
  ScratchDir s;
  anova::AnalysisState state;
  state.settings = {{"seq_len", 6}, {"shard", "0/2"}};
  state.windows = 5;
  auto stats = directStatistics(randomSequences(5, 6, 3, 5), 1, 2);
  stats.reservoir = Eigen::MatrixXd::Random(10, 3);
  stats.reservoir_windows = {0, 1};
  stats.previous_cosine_sum = 0.25;
  state.layers.push_back(stats);
  anova::saveState(state, s / "state.safetensors");
  const auto back = anova::loadState(s / "state.safetensors");
  EXPECT_EQ(back.settings, state.settings);
  EXPECT_EQ(back.windows, 5);
  ASSERT_EQ(back.layers.size(), 1u);
  const auto& l = back.layers[0];
  EXPECT_EQ(l.layer, 2);
  EXPECT_EQ(l.position_sum, stats.position_sum);
  EXPECT_EQ(l.second_moment, stats.second_moment);
  EXPECT_EQ(l.context_means, stats.context_means);
  EXPECT_EQ(l.context_labels, stats.context_labels);
  EXPECT_EQ(l.reservoir, stats.reservoir);
  EXPECT_EQ(l.norm_sum, stats.norm_sum);
  EXPECT_EQ(l.previous_cosine_sum, 0.25);
}

// Three layers, the second with its block's attention inputs, the last two with their
// magnitude statistics (the first as a state written before them).
anova::AnalysisState threeLayers() {
  anova::AnalysisState state;
  state.settings = {{"seq_len", 6}};
  state.windows = 5;
  for (int64_t layer : {0, 1, 2}) {
    const auto sequences = randomSequences(5, 6, 3, 7 + static_cast<unsigned>(layer));
    auto stats = directStatistics(sequences, 1, layer);
    if (layer >= 1) stats.magnitudes = directMagnitudes(sequences, 1, {0, 1, 2, 3, 4}, std::vector<std::vector<int64_t>>(5, {9, 8, 7, 6, 5, 4}));
    stats.reservoir = Eigen::MatrixXd::Random(10, 3);
    stats.reservoir_windows = {0, 1};
    stats.previous_cosine_sum = 0.125 * static_cast<double>(layer);
    if (layer == 1) {
      stats.attention_input_sum = Eigen::MatrixXd::Random(6, 3);
      stats.attention_samples = Eigen::MatrixXd::Random(12, 3).cast<float>().cast<double>();
      stats.attention_sample_windows = {0, 1};
    }
    state.layers.push_back(std::move(stats));
  }
  return state;
}

// A one-wave layer-major run saves each layer on its own once final, and its state is
// then put together from those files and whatever it still holds: the very file saving all
// the layers at once writes, byte for byte.
TEST(StateFile, LayersSavedOneAtATimeMakeTheFileOfAllAtOnce) {
  ScratchDir s;
  const auto state = threeLayers();
  anova::saveState(state, s / "whole.safetensors");
  std::vector<fs::path> parts;
  for (const std::size_t i : {std::size_t{2}, std::size_t{0}}) {  // any order: the state lists layers by index
    anova::AnalysisState one;
    one.layers.push_back(state.layers[i]);
    parts.push_back(s / ("layer." + std::to_string(i) + ".safetensors"));
    anova::saveState(one, parts.back());
  }
  auto held = state;
  held.layers = {state.layers[1]};
  anova::saveState(held, parts, s / "assembled.safetensors");
  EXPECT_EQ(readFile(s / "assembled.safetensors"), readFile(s / "whole.safetensors"));
  anova::saveState(state, {}, s / "none.safetensors");
  EXPECT_EQ(readFile(s / "none.safetensors"), readFile(s / "whole.safetensors"));
  auto two = state;
  two.layers = {state.layers[0], state.layers[1]};
  anova::saveState(two, s / "two.safetensors");
  EXPECT_THROW(anova::saveState(held, {s / "two.safetensors"}, s / "bad.safetensors"), InputError);  // not one layer
}

// The end stages read a state a layer at a time: each layer's shape without reading it,
// and the layer itself as loadState gives it.
TEST(StateFile, AReaderGivesEachLayerAndItsShape) {
  ScratchDir s;
  const auto state = threeLayers();
  anova::saveState(state, s / "state.safetensors");
  const anova::StateReader reader(s / "state.safetensors");
  EXPECT_EQ(reader.settings(), state.settings);
  EXPECT_EQ(reader.windows(), 5);
  ASSERT_EQ(reader.layerCount(), 3u);
  std::vector<anova::LayerStatistics> read;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto shape = reader.layerShape(i);
    EXPECT_EQ(shape.layer, static_cast<int64_t>(i));
    EXPECT_EQ(shape.positions, 5);
    EXPECT_EQ(shape.dim, 3);
    EXPECT_TRUE(shape.second_moment);
    EXPECT_EQ(shape.attention_inputs, i == 1);
    read.push_back(reader.layer(i));
  }
  expectSameStatistics(state.layers, read);
  EXPECT_EQ(read[1].attention_samples, state.layers[1].attention_samples);
  EXPECT_TRUE(read[0].magnitudes.empty());  // a state written before them still reads
  EXPECT_FALSE(read[2].magnitudes.empty());
  EXPECT_EQ(read[2].magnitudes.max_token[0], state.layers[2].magnitudes.max_token[0]);
}

// A state whose magnitude tensors were edited: a where that is not a window, position or
// token id (NaN, a fraction, below -1), or a histogram of another size, is refused by name.
TEST(StateFile, EditedMagnitudeTensorsAreRefused) {
  ScratchDir s;
  anova::saveState(threeLayers(), s / "state.safetensors");
  const auto file = io::SafetensorsFile::open(s / "state.safetensors");
  auto edited = [&](const std::string& tensor, const std::vector<int64_t>& shape, const std::vector<double>& values) {
    io::SafetensorsWriter w;
    for (const auto& [key, value] : file.metadata()) w.setMetadata(key, value);
    for (const auto& [name, view] : file.tensors())
      if (name != tensor) w.add(name, view.dtype, view.shape, view.data, view.nbytes);
    w.addF64(tensor, shape, values);
    static int count = 0;
    const auto path = s / ("edited-" + std::to_string(++count) + ".safetensors");
    w.write(path);
    return path;
  };
  for (const double bad : {std::nan(""), 0.5, -2.0}) {
    std::vector<double> where(9, 0.0);
    where[4] = bad;
    try {
      anova::loadState(edited("layer.2.max_where", {3, 3}, where));
      ADD_FAILURE() << bad << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("tensor 'layer.2.max_where' holds values that are not windows"), std::string::npos) << e.what();
    }
  }
  // Shapes: a histogram of 10 bins, squares in two columns (a vector read as a matrix would
  // otherwise be resized, or abort in a build with Eigen's assertions).
  for (const auto& [tensor, shape] : {std::pair<std::string, std::vector<int64_t>>{"layer.1.magnitude_counts", {1, 10}},
                                      {"layer.1.position_square_sum", {6, 2}}}) {
    try {
      anova::loadState(edited(tensor, shape, std::vector<double>(static_cast<std::size_t>(shape[0] * shape[1]), 1.0)));
      ADD_FAILURE() << tensor << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("the massive-activation tensors of layer 1 do not fit its statistics"), std::string::npos) << e.what();
    }
  }
  // Values no run gives: a NaN or negative maximum (a NaN would not even sort), a negative count.
  for (const auto& [tensor, shape, bad] : {std::tuple<std::string, std::vector<int64_t>, double>{"layer.2.position_abs_max", {6, 3}, std::nan("")},
                                           {"layer.2.position_abs_max", {6, 3}, -1.0},
                                           {"layer.2.magnitude_counts", {1, anova::kMagnitudeBins}, -3.0}}) {
    std::vector<double> values(static_cast<std::size_t>(shape[0] * shape[1]), 1.0);
    values[1] = bad;
    try {
      anova::loadState(edited(tensor, shape, values));
      ADD_FAILURE() << tensor << " holding " << bad << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("hold values no run gives (negative, NaN or infinite)"), std::string::npos) << e.what();
    }
  }
}

// The cosines between layers (--corpus random) round trip, and a sum that is not one per
// earlier hidden state, or beyond the tokens it sums over, is refused by name.
TEST(StateFile, LayerCosinesRoundTripAndEditedOnesAreRefused) {
  ScratchDir s;
  auto state = threeLayers();
  for (auto& l : state.layers) {
    l.layer_cosines = true;
    l.earlier_cosine_sums = Eigen::VectorXd::LinSpaced(l.layer, 1.5, 2.5);
  }
  anova::saveState(state, s / "state.safetensors");
  const auto back = anova::loadState(s / "state.safetensors");
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(back.layers[i].layer_cosines);
    EXPECT_EQ(back.layers[i].earlier_cosine_sums, state.layers[i].earlier_cosine_sums);
  }
  EXPECT_FALSE(anova::loadState([&] {
                 anova::saveState(threeLayers(), s / "plain.safetensors");
                 return s / "plain.safetensors";
               }()).layers[2].layer_cosines);
  const double tokens = 5 * 5;  // 5 windows of 5 positions after the skip
  for (const auto& bad : {nlohmann::json::array({1.0}), nlohmann::json::array({1.0, tokens + 1}),
                          nlohmann::json::array({1.0, nullptr}), nlohmann::json("2")}) {
    auto edited = state;
    anova::saveState(edited, s / "edited.safetensors");
    const auto file = io::SafetensorsFile::open(s / "edited.safetensors");
    auto meta = nlohmann::json::parse(file.metadata().at("posgeom"));
    meta["layers"][2]["earlier_cosine_sums"] = bad;
    io::SafetensorsWriter w;
    for (const auto& [key, value] : file.metadata()) w.setMetadata(key, key == "posgeom" ? meta.dump() : value);
    for (const auto& [name, view] : file.tensors()) w.add(name, view.dtype, view.shape, view.data, view.nbytes);
    w.write(s / "bad.safetensors");
    try {
      anova::loadState(s / "bad.safetensors");
      ADD_FAILURE() << bad.dump() << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("layer 2's earlier_cosine_sums is not one sum of cosines per earlier hidden state"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(StateFile, OtherSafetensorsAreRejected) {
  POSGEOM_REQUIRE_SHARED("fixtures/golden/tiny-gpt2.safetensors");
  EXPECT_THROW(anova::loadState(sharedDir() / "fixtures/golden/tiny-gpt2.safetensors"), InputError);
}

}  // namespace
}  // namespace posgeom::testing
