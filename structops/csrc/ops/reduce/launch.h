// What the CUDA host glue of the reductions (cuda_host.cpp) hands to the torch-free device code
// (cuda.cu): plain data, so nvcc compiles the kernels without torch (ARCHITECTURE decision 6).
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // Dtype
#include <ops/runtime_names.h>

namespace structops {

// LogSumExp: complex rows only (the real one is the normalisation family's RowOp).
enum class ReduceOp : int8_t {
  Sum,
  Mean,
  Prod,
  Max,
  Min,
  All,
  Any,
  Norm0,
  Norm1,
  Norm2,
  NormP,
  NormInf,
  NormNegInf,
  LogSumExp
};

// The input is viewed as [outer, n, inner] with the reduced elements along n:
//   inner == 1: rows of n contiguous elements (the host glue permutes the reduced dims last);
//   inner > 1:  the reduced dims are outside contiguous kept elements (sum(x, 0) of a matrix),
//               read in place column by column.
// out holds outer * inner results, contiguous.
struct ReduceLaunch {
  Dtype dtype;  // input and output dtype (the host glue casts the input first), except:
  // an integer or bool input of an int64 sum or product is read as it is (in_dtype, one of
  // them; bool as its bytes) and widened per element: a cast copy took 8 bytes per element.
  bool widen_in = false;
  Dtype in_dtype = Dtype::Int64;
  ReduceOp op;
  double p = 2;  // NormP's exponent
  int64_t outer = 1, n = 1, inner = 1;
  const void* in = nullptr;
  void* out = nullptr;
  // Two-pass path (few long rows): partial results per row in `workspace`
  // (reduce_workspace_bytes() bytes, allocated by the host glue on the current device).
  void* workspace = nullptr;
  void* stream = nullptr;  // cudaStream_t
  // Rows (inner == 1): Auto splits few long rows into two passes (splits_for in cuda.cu);
  // OnePass and TwoPass force one way (sum's kernel variants, timed by structgen::autotune).
  enum class Passes : int8_t { Auto, OnePass, TwoPass } passes = Passes::Auto;
  int block = 256;  // threads per block of the long-row kernel: 128, 256 or 512 (sum, mean, norms)
};

namespace cuda_kernels {
// The workspace bytes the launch needs on the current device (0: one pass).
int64_t reduce_workspace_bytes(const ReduceLaunch& p);
// Launches the kernels on p.stream; returns nullptr or the CUDA error string.
const char* reduce(const ReduceLaunch& p);
// argmax (op Max) / argmin (op Min) over rows (inner == 1): `out` holds int64 indices.
const char* arg_reduce(const ReduceLaunch& p);
// prod (op Prod) / logsumexp (op LogSumExp) of `outer` contiguous rows of `n` complex elements
// (dtype ComplexFloat or ComplexDouble; inner == 1): `out` holds one complex result per row
// (cuda_complex.cu).
const char* complex_rows(const ReduceLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
