#include "posgeom/pass/window_batches.h"

namespace posgeom::pass {

WindowBatches::WindowBatches(corpus::WindowSampler& sampler, const corpus::TokenStream& stream, int64_t batch_size)
    : sampler_(sampler), stream_(stream), batch_size_(batch_size) {
  ahead_ = std::async(std::launch::async, [this] { return read(); });
}

WindowBatches::~WindowBatches() {
  if (ahead_.valid()) ahead_.wait();  // the reader uses the sampler, which may go next
}

WindowBatch WindowBatches::read() {
  WindowBatch batch;
  while (batch.size() < batch_size_) {
    auto window = sampler_.next();
    if (!window) break;
    batch.ids.insert(batch.ids.end(), window->ids.begin(), window->ids.end());
    batch.indices.push_back(window->index);
    batch.labels.push_back(std::move(window->label));
  }
  batch.windows_read = sampler_.stats();
  batch.stream = stream_.stats();
  return batch;
}

bool WindowBatches::finished() {
  if (ended_) return true;
  if (!peeked_) peeked_ = ahead_.get();
  return peeked_->size() == 0;
}

WindowBatch WindowBatches::next() {
  if (ended_) return {};
  auto batch = peeked_ ? std::move(*peeked_) : ahead_.get();
  peeked_.reset();
  if (batch.size() < batch_size_)
    ended_ = true;
  else
    ahead_ = std::async(std::launch::async, [this] { return read(); });
  return batch;
}

}  // namespace posgeom::pass
