// Elementwise loops for hand-written CPU kernels: inputs already in the output's dtype and
// expanded to its shape (stride 0 where broadcast). A contiguous fast path the compiler can
// vectorise, and a strided path that walks the innermost dim; both split across threads with
// at::parallel_for, which respects torch.set_num_threads and stays serial below the grain.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>

#include <array>
#include <utility>

namespace structops::cpu {

constexpr int64_t kGrainSize = 32768;  // torch's own internal::GRAIN_SIZE

template <typename scalar_t, size_t N, typename F, size_t... I>
void for_each_impl(const at::Tensor& out, const std::array<at::Tensor, N>& inputs, F f,
                   std::index_sequence<I...>) {
  const int64_t numel = out.numel();
  if (numel == 0) return;
  scalar_t* o = out.data_ptr<scalar_t>();
  std::array<const scalar_t*, N> in{inputs[I].template const_data_ptr<scalar_t>()...};

  bool contiguous = out.is_contiguous();
  for (const auto& t : inputs) contiguous = contiguous && t.is_contiguous();
  if (contiguous) {
    at::parallel_for(0, numel, kGrainSize, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = f(in[I][i]...);
    });
    return;
  }

  const int64_t ndim = out.dim();
  const auto sizes = out.sizes();
  std::array<at::IntArrayRef, N + 1> strides{out.strides(), inputs[I].strides()...};
  at::parallel_for(0, numel, kGrainSize, [&](int64_t begin, int64_t end) {
    // Multi-index of `begin`, then the element offset of every operand.
    std::vector<int64_t> index(ndim);
    std::array<int64_t, N + 1> offset{};
    int64_t rest = begin;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      index[d] = rest % sizes[d];
      rest /= sizes[d];
      for (size_t k = 0; k <= N; ++k) offset[k] += index[d] * strides[k][d];
    }
    const int64_t last = ndim - 1;
    const int64_t inner = sizes[last];
    for (int64_t i = begin; i < end;) {
      const int64_t n = std::min(inner - index[last], end - i);
      const int64_t so = strides[0][last];
      const std::array<int64_t, N> si{strides[I + 1][last]...};
      for (int64_t k = 0; k < n; ++k) {
        o[offset[0] + k * so] = f(in[I][offset[I + 1] + k * si[I]]...);
      }
      i += n;
      // Advance the multi-index past the row just written, carrying into outer dims.
      for (size_t k = 0; k <= N; ++k) offset[k] += n * strides[k][last];
      index[last] += n;
      for (int64_t d = last; d > 0 && index[d] == sizes[d]; --d) {
        for (size_t k = 0; k <= N; ++k) offset[k] += strides[k][d - 1] - sizes[d] * strides[k][d];
        index[d] = 0;
        ++index[d - 1];
      }
    }
  });
}

// out[i] = f(inputs[0][i], ..., inputs[N-1][i]) over out's shape.
template <typename scalar_t, size_t N, typename F>
void for_each(const at::Tensor& out, const std::array<at::Tensor, N>& inputs, F f) {
  for_each_impl<scalar_t, N>(out, inputs, f, std::make_index_sequence<N>{});
}

// An input brought to the output's dtype and shape (a copy only when the dtype differs).
inline at::Tensor as_operand(const at::Tensor& t, const at::Tensor& out) {
  at::Tensor converted = t.scalar_type() == out.scalar_type() ? t : t.to(out.scalar_type());
  return converted.expand(out.sizes());
}

}  // namespace structops::cpu
