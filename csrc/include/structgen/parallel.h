// Intra-op parallelism for the CPU kernels of generated extensions.
//
// With torch's OpenMP backend (the default wheels), at::parallel_for is a header template whose
// `#pragma omp parallel` only takes effect in a translation unit compiled with -fopenmp; in any
// other TU it silently runs serially. Kernels call this out-of-line wrapper instead: its one TU
// (csrc/runtime/openmp/parallel.cpp) is built with -fopenmp but links no OpenMP runtime of its own, so it
// runs on torch's (libtorch_cpu's libgomp) and torch.set_num_threads governs it.
#pragma once

#include <c10/util/FunctionRef.h>

#include <cstdint>

namespace structgen {

// f(chunk_begin, chunk_end) over [begin, end) on torch's intra-op threads, chunks of at least
// `grain` elements; serial (one call) below the grain, on one thread, or inside a parallel region.
void parallel_for(int64_t begin, int64_t end, int64_t grain, c10::function_ref<void(int64_t, int64_t)> f);

}  // namespace structgen
