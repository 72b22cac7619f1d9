#pragma once
// posgeom.Windows: the windows `posgeom analyze` would read for the same options, batch by
// batch, for a model that runs in Python.
#include <cstdint>
#include <string>
#include <vector>

namespace posgeom::python {

struct WindowBatchData {
  std::vector<int32_t> ids;  // [windows x T], window after window
  std::vector<int64_t> indices;
  std::vector<std::string> labels;
  int64_t seq_len = 0;
  int64_t size() const { return static_cast<int64_t>(indices.size()); }
};

}  // namespace posgeom::python
