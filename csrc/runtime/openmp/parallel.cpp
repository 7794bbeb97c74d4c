// Built with -fopenmp (CMakeLists.txt): see structgen/parallel.h for why this is out of line.
#include <structgen/parallel.h>

#include <ATen/Parallel.h>

namespace structgen {

void parallel_for(int64_t begin, int64_t end, int64_t grain, c10::function_ref<void(int64_t, int64_t)> f) {
  // at::parallel_for itself runs serially below the grain, on one thread or when nested.
  at::parallel_for(begin, end, grain, [&](int64_t b, int64_t e) { f(b, e); });
}

}  // namespace structgen
