#pragma once
// Batches of windows for the pass, read one batch ahead on another thread so that corpus
// reading and tokenization overlap the forward pass. Torch-free.
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/corpus/token_stream.h"
#include "posgeom/corpus/window_sampler.h"

namespace posgeom::pass {

struct WindowBatch {
  std::vector<int32_t> ids;          // [windows x T], window after window
  std::vector<int64_t> indices;      // each window's index
  std::vector<std::string> labels;   // each window's document
  corpus::WindowStats windows_read;  // the sampler's counts once this batch was cut
  corpus::TokenStreamStats stream;   // and the stream's
  int64_t size() const { return static_cast<int64_t>(indices.size()); }
};

class WindowBatches {
 public:
  // Starts reading the first batch at once. The sampler and the stream are used only by
  // the reading thread from here on.
  WindowBatches(corpus::WindowSampler& sampler, const corpus::TokenStream& stream, int64_t batch_size);
  ~WindowBatches();
  WindowBatches(const WindowBatches&) = delete;
  WindowBatches& operator=(const WindowBatches&) = delete;

  // The next batch (empty at the end of the corpus), and the one after it starts being
  // read. Reading errors (InputError) surface here, for the batch they belong to.
  WindowBatch next();
  // Whether the batch last handed out was the corpus' last (short or empty).
  bool exhausted() const { return ended_; }
  // Whether no window is left after the batch last handed out: waits for the batch being
  // read ahead (kept for next(), whose reading errors then surface here). What tells a
  // layer-major pass that a full wave is its last.
  bool finished();

 private:
  WindowBatch read();
  corpus::WindowSampler& sampler_;
  const corpus::TokenStream& stream_;
  int64_t batch_size_;
  bool ended_ = false;
  std::future<WindowBatch> ahead_;
  std::optional<WindowBatch> peeked_;
};

}  // namespace posgeom::pass
