#include <structgen/elementwise.h>

#include <c10/core/MemoryFormat.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <vector>

namespace structgen {

namespace {

// The inputs' strides seen through broadcasting: 0 where an input is broadcast.
c10::SymDimVector broadcast_strides(c10::SymIntArrayRef shape, const at::Tensor& t) {
  c10::SymDimVector strides(shape.size(), c10::SymInt(0));
  auto sizes = t.sym_sizes();
  auto in_strides = t.sym_strides();
  size_t offset = shape.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (same(sizes[i], 1) && !same(shape[offset + i], 1)) continue;
    strides[offset + i] = in_strides[i];
  }
  return strides;
}

}  // namespace

c10::SymDimVector elementwise_strides(c10::SymIntArrayRef shape, std::initializer_list<NamedTensor> inputs) {
  const size_t ndim = shape.size();
  if (ndim == 0) return {};

  // TensorIterator's fast setup: every input has exactly the output's shape.
  bool all_same_shape = true;
  for (const auto& in : inputs) all_same_shape = all_same_shape && same_sizes(in.tensor.sym_sizes(), shape);
  if (all_same_shape) {
    bool contiguous = true, channels_last = true, dense = true;
    for (const auto& in : inputs) contiguous = contiguous && in.tensor.is_contiguous();
    if (contiguous) return {};
    for (const auto& in : inputs) {
      channels_last = channels_last && in.tensor.is_contiguous(at::MemoryFormat::ChannelsLast);
      dense = dense && in.tensor.is_non_overlapping_and_dense();
    }
    if (channels_last) {
      auto strides = c10::get_channels_last_strides_2d<c10::SymInt>(shape);
      return c10::SymDimVector(strides.begin(), strides.end());
    }
    if (dense) {
      const auto& first = inputs.begin()->tensor;
      bool equal = true;
      for (const auto& in : inputs) equal = equal && same_sizes(in.tensor.sym_strides(), first.sym_strides());
      if (equal) return c10::SymDimVector(first.sym_strides().begin(), first.sym_strides().end());
    }
  }

  c10::SmallVector<c10::SymDimVector, 4> strides;
  for (const auto& in : inputs) strides.push_back(broadcast_strides(shape, in.tensor));

  // perm[0] is the innermost dim; start from the row-major order and insertion-sort by the
  // inputs' strides, where an ambiguous comparison (a broadcast dim) defers to the next input.
  c10::SmallVector<size_t, 8> perm(ndim);
  std::iota(perm.rbegin(), perm.rend(), 0);
  auto should_swap = [&](size_t dim0, size_t dim1) -> int {
    for (const auto& s : strides) {
      const auto& s0 = s[dim0];
      const auto& s1 = s[dim1];
      if (same(s0, 0) || same(s1, 0)) continue;
      if (less(s0, s1)) return -1;
      if (less(s1, s0)) return 1;
      if (less(shape[dim1], shape[dim0])) return 1;  // equal strides: the smaller size goes inward
    }
    return 0;
  };
  for (size_t i = 1; i < ndim; ++i) {
    size_t dim1 = i;
    for (size_t dim0 = i; dim0-- > 0;) {
      int cmp = should_swap(perm[dim0], perm[dim1]);
      if (cmp > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (cmp < 0) {
        break;
      }
    }
  }
  bool row_major = true;
  for (size_t j = 0; j < ndim; ++j) row_major = row_major && perm[j] == ndim - j - 1;
  if (row_major) return {};
  c10::SymDimVector out(ndim);
  c10::SymInt next = 1;
  for (size_t j = 0; j < ndim; ++j) {
    out[perm[j]] = next;
    next = next * shape[perm[j]];
  }
  return out;
}

}  // namespace structgen
