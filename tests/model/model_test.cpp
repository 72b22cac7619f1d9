#include "posgeom/model/model.h"

#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/random_checkpoint.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

class ModelContract : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir();
    model::RandomCheckpointSpec spec;
    spec.layers = 3;
    spec.vocab_size = 50;
    spec.max_positions = 16;
    model::writeRandomCheckpoint(spec, scratch_->path() / "m");
  }
  static void TearDownTestSuite() { delete scratch_; }
  static model::LoadedModel load() {
    return model::loadModel(scratch_->path() / "m", model::Numerics::parse("float32", "cpu"));
  }
  static ScratchDir* scratch_;
};
ScratchDir* ModelContract::scratch_ = nullptr;

struct Recorder : model::LayerObserver {
  std::vector<int64_t> hidden, attention;
  void onHidden(int64_t l, const at::Tensor&) override { hidden.push_back(l); }
  void onAttentionInput(int64_t b, const at::Tensor&) override { attention.push_back(b); }
};

TEST_F(ModelContract, ObserverSeesEveryLayerInOrder) {
  const auto m = load();
  Recorder rec;
  model::ForwardRequest r;
  r.ids = at::randint(0, 50, {2, 8}, at::kLong);
  r.observer = &rec;
  m.model->forward(r);
  EXPECT_EQ(rec.hidden, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(rec.attention, (std::vector<int64_t>{0, 1, 2}));
}

TEST_F(ModelContract, LastLayerStopsEarlyAndSkipsTheHead) {
  const auto m = load();
  Recorder rec;
  model::ForwardRequest r;
  r.ids = at::randint(0, 50, {1, 8}, at::kLong);
  r.observer = &rec;
  r.last_layer = 1;
  r.want_logits = true;
  const auto out = m.model->forward(r);
  EXPECT_EQ(rec.hidden, (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(out.logits.defined());
}

// The blocks run one at a time (as a pass over a model larger than its device runs them)
// give the forward's hidden states and logits exactly: the loop adds nothing of its own.
TEST_F(ModelContract, BlockByBlockIsTheForward) {
  const auto m = load();
  struct Keeper : model::LayerObserver {
    std::vector<at::Tensor> hidden;
    void onHidden(int64_t, const at::Tensor& h) override { hidden.push_back(h.clone()); }
  } kept;
  model::ForwardRequest r;
  r.ids = at::randint(0, 50, {2, 8}, at::kLong);
  r.observer = &kept;
  r.want_logits = true;
  const auto whole = m.model->forward(r);
  model::ForwardRequest plain;
  plain.ids = r.ids;
  plain.want_logits = true;
  model::BlockContext context(plain, true, 8);
  auto x = m.model->embed(r.ids, context);
  ASSERT_EQ(kept.hidden.size(), 4u);
  EXPECT_TRUE(at::equal(x, kept.hidden[0]));
  for (int64_t i = 0; i < 3; ++i) {
    x = m.model->block(i, x, context);
    EXPECT_TRUE(at::equal(x, kept.hidden[static_cast<std::size_t>(i + 1)])) << i;
  }
  EXPECT_TRUE(at::equal(m.model->finish(x, plain).logits, whole.logits));
}

// What a wave's observer saw: each batch's hidden states and attention inputs, and the
// order of the calls as (batch, layer).
struct WaveRecorder : model::LayerObserver {
  std::size_t current = 0;
  std::vector<std::vector<at::Tensor>> hidden, attention;
  std::vector<std::pair<std::size_t, int64_t>> order;
  explicit WaveRecorder(std::size_t batches) : hidden(batches), attention(batches) {}
  void onHidden(int64_t l, const at::Tensor& h) override {
    hidden[current].push_back(h.clone());
    order.emplace_back(current, l);
  }
  void onAttentionInput(int64_t, const at::Tensor& a) override { attention[current].push_back(a.clone()); }
};

// A wave (the layer-major pass) over a model streaming its blocks runs block b on every
// batch before block b + 1 (and says so once it has), reads each block's weights once, and
// gives each batch, bit for bit, what its own forward through the resident model gives:
// hidden states, attention inputs, logits. Every family, as its random checkpoint.
class WavePerArch : public ::testing::TestWithParam<std::string> {};

TEST_P(WavePerArch, AWaveGivesEachBatchItsOwnForward) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.model_type = GetParam();
  spec.layers = 3, spec.hidden_size = 32, spec.heads = 4, spec.vocab_size = 100, spec.max_positions = 32;
  model::writeRandomCheckpoint(spec, s / "m");
  const auto numerics = model::Numerics::parse("float32", "cpu");
  const auto loaded = model::loadModel(s / "m", numerics);
  const auto streamed = model::loadModel(s / "m", numerics, model::WeightResidency::kStreamedBlocks);
  const auto& m = *streamed.model;
  EXPECT_LT(*streamed.bytes_read, *loaded.bytes_read);  // the blocks not read yet
  const std::vector<int64_t> sizes = {2, 1, 3};
  WaveRecorder wave(sizes.size());
  std::vector<model::ForwardRequest> requests;
  for (const auto b : sizes) {
    model::ForwardRequest r;
    r.ids = at::randint(0, 100, {b, 12}, at::kLong);
    r.want_logits = true;
    r.observer = &wave;
    requests.push_back(r);
  }
  std::vector<int64_t> blocks_done;
  const auto outputs = m.forwardWave(
      requests, [&](std::size_t k) { wave.current = k; },
      [&](int64_t block) {
        blocks_done.push_back(block);
        for (const auto& hidden : wave.hidden) EXPECT_EQ(hidden.size(), static_cast<std::size_t>(block + 2));  // every batch
      });
  EXPECT_EQ(blocks_done, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(*streamed.bytes_read, *loaded.bytes_read);  // each block's weights read once for the wave
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    WaveRecorder alone(1);
    auto r = requests[k];
    r.observer = &alone;
    const auto own = loaded.model->forward(r);
    ASSERT_EQ(wave.hidden[k].size(), 4u);
    ASSERT_EQ(wave.attention[k].size(), alone.attention[0].size());
    for (std::size_t l = 0; l < 4; ++l) EXPECT_TRUE(at::equal(wave.hidden[k][l], alone.hidden[0][l])) << k << " " << l;
    for (std::size_t b = 0; b < alone.attention[0].size(); ++b)
      EXPECT_TRUE(at::equal(wave.attention[k][b], alone.attention[0][b])) << k << " block " << b;
    EXPECT_EQ(outputs[k].logits.defined(), own.logits.defined());
    if (own.logits.defined()) {
      EXPECT_TRUE(at::equal(outputs[k].logits, own.logits)) << k;
    }
  }
  std::vector<std::pair<std::size_t, int64_t>> layer_major;
  for (int64_t l = 0; l < 4; ++l)
    for (std::size_t k = 0; k < sizes.size(); ++k) layer_major.emplace_back(k, l);
  EXPECT_EQ(wave.order, layer_major);
  // What the heads analysis asks of a block after the pass: read again, the same maps.
  const auto mine = m.queryKeyMaps(1), theirs = loaded.model->queryKeyMaps(1);
  EXPECT_TRUE(at::equal(mine.wq, theirs.wq) && at::equal(mine.bk, theirs.bk));
}

INSTANTIATE_TEST_SUITE_P(Archs, WavePerArch, ::testing::ValuesIn(model::supportedModelTypes()));

TEST_F(ModelContract, RejectsIdsOutsideTheVocabulary) {
  const auto m = load();
  model::ForwardRequest r;
  r.ids = at::full({1, 4}, 50, at::kLong);
  EXPECT_THROW(m.model->forward(r), InputError);
  r.ids = at::full({1, 4}, -1, at::kLong);
  EXPECT_THROW(m.model->forward(r), InputError);
}

TEST_F(ModelContract, RejectsSequencesLongerThanTheLearnedPositions) {
  const auto m = load();
  model::ForwardRequest r;
  r.ids = at::zeros({1, 17}, at::kLong);
  try {
    m.model->forward(r);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the model's 16 positions"), std::string::npos);
  }
}

TEST_F(ModelContract, CausalModelIgnoresTheFuture) {
  const auto m = load();
  struct Last : model::LayerObserver {
    at::Tensor h;
    void onHidden(int64_t l, const at::Tensor& x) override {
      if (l == 3) h = x.clone();
    }
  } a, b;
  model::ForwardRequest r;
  r.ids = at::randint(0, 50, {1, 8}, at::kLong);
  r.observer = &a;
  m.model->forward(r);
  r.ids.index_put_({0, 7}, (r.ids[0][7].item<int64_t>() + 1) % 50);
  r.observer = &b;
  m.model->forward(r);
  EXPECT_TRUE(at::allclose(a.h.narrow(1, 0, 7), b.h.narrow(1, 0, 7)));
  EXPECT_FALSE(at::allclose(a.h.narrow(1, 7, 1), b.h.narrow(1, 7, 1)));
}

}  // namespace
}  // namespace posgeom::testing
