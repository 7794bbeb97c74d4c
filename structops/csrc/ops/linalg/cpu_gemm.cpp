// The CPU matrix-multiply kernels of ops/linalg/gemm.h: our blocked GEMM and ATen's.
//
// Blocked GEMM (float32/float64; float16/bfloat16 packed to float), BLIS's loop structure with
// C row-major and the vector dim along C's columns:
//
//   for pc in K by KC:                       (C accumulates over K blocks)
//     pack B[pc:pc+KC, :] into NR-wide micro-panels (kc x NR, zero-padded)    -- in parallel
//     for each task = (MC rows of C) x (NC columns of C), in parallel:
//       pack A[rows, pc:pc+KC] into MR-tall micro-panels (MR x kc), once per row block per thread
//       for each A micro-panel (MR x kc, stays in L1):
//         for each B micro-panel of the task's columns (kc x NR; the task's NC x KC block in L2):
//           micro-kernel: an MR x NR tile of C in registers, kc rank-1 updates
//
// The micro-kernel is written once on GCC vector types and compiled three times with target
// attributes (AVX-512: 12 x 2 zmm, AVX2+FMA: 6 x 2 ymm, baseline: 6 x 2 xmm); the macro loop
// around it is compiled with it, the packing and threading are plain C++.
#include <ops/linalg/gemm.h>
#include <structgen/cpu/pointwise.h>  // cpu::kGrainSize
#include <structgen/parallel.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <ATen/ops/addmm_ops.h>
#include <ATen/ops/mm_ops.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <type_traits>
#include <ops/runtime_names.h>

// Which micro-kernel geometries are compiled. A portable x86-64 build (STRUCTGEN_CPU_ISA=portable)
// compiles each ISA's with its target attribute and picks one at run time; a native build (the
// default, -march=native) or another CPU compiles the one of the ISA it is compiled for.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(STRUCTGEN_HOST_ISA)
#define SO_MM_PICK_AT_RUN_TIME 1
#define SO_MM_V4 1
#define SO_MM_V3 1
#define SO_TARGET_V4 __attribute__((target("arch=x86-64-v4")))
#define SO_TARGET_V3 __attribute__((target("arch=x86-64-v3")))
#else
#define SO_MM_PICK_AT_RUN_TIME 0
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512CD__) && defined(__AVX512DQ__) && \
    defined(__AVX512VL__)
#define SO_MM_V4 1
#define SO_MM_V3 0
#elif defined(__AVX2__) && defined(__FMA__)
#define SO_MM_V4 0
#define SO_MM_V3 1
#else
#define SO_MM_V4 0
#define SO_MM_V3 0
#endif
#define SO_TARGET_V4
#define SO_TARGET_V3
#endif

namespace structops::cpu {
namespace {

constexpr int64_t kKC = 256;  // depth of a packed block: an MR x KC A micro-panel fits L1

// One tile of C computed from packed panels.
template <typename T>
struct Tile {
  int64_t mc, nc, kc;   // real sizes (the packed panels are padded to MR / NR)
  const T* ap;          // ceil(mc / MR) panels of MR x kc
  const T* bp;          // ceil(nc / NR) panels of kc x NR: panel j at bp + j * b_step, rows ldb apart
  int64_t b_step, ldb;  // packed: NR * kc, NR; B read in place (unit column stride): NR, its row stride
  const T* btail;       // in place: the last, partial panel packed (kc x NR, zero-padded); else null
  T* c;                 // top-left element; columns have stride 1
  int64_t ldc;
  T alpha, beta;  // C = alpha * acc + beta * C, with C not read when !read_c
  bool read_c;
};

// GCC vector types of L lanes (an alias template would drop the attribute on a dependent type).
template <typename T, int L>
struct Vec;
#define SO_VEC(T, L)                                            \
  template <>                                                   \
  struct Vec<T, L> {                                            \
    typedef T type __attribute__((vector_size(L * sizeof(T)))); \
  };
SO_VEC(float, 16)
SO_VEC(float, 8)
SO_VEC(float, 4)
SO_VEC(double, 8)
SO_VEC(double, 4)
SO_VEC(double, 2)
#undef SO_VEC
template <typename T, int L>
using vec_t = typename Vec<T, L>::type;

template <typename T, int MR, int NV, int L>
[[gnu::always_inline]] inline void micro(int64_t kc, const T* __restrict a, const T* __restrict b,
                                         int64_t ldb, T* __restrict c, int64_t ldc, int64_t mr, int64_t nr,
                                         T alpha, T beta, bool read_c) {
  using V = vec_t<T, L>;
  constexpr int NR = NV * L;
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = V{};
  for (int64_t p = 0; p < kc; ++p) {
    V bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) __builtin_memcpy(&bv[j], b + p * ldb + j * L, sizeof(V));
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V av = a[p * MR + i] - V{};  // a broadcast (x - 0 folds to x; x + 0 would not, for -0)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] += av * bv[j];
    }
  }
  if (mr == MR && nr == NR) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) {
        T* cp = c + i * ldc + j * L;
        V r = acc[i][j] * alpha;
        if (read_c) {
          V old;
          __builtin_memcpy(&old, cp, sizeof(V));
          r += old * beta;
        }
        __builtin_memcpy(cp, &r, sizeof(V));
      }
    return;
  }
  alignas(64) T tmp[MR * NR];
  __builtin_memcpy(tmp, acc, sizeof(tmp));
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t j = 0; j < nr; ++j) {
      T* cp = c + i * ldc + j;
      *cp = read_c ? tmp[i * NR + j] * alpha + *cp * beta : tmp[i * NR + j] * alpha;
    }
}

template <typename T, int MR, int NV, int L>
[[gnu::always_inline]] inline void macro(const Tile<T>& t) {
  constexpr int NR = NV * L;
  for (int64_t i0 = 0; i0 < t.mc; i0 += MR) {
    const T* ap = t.ap + i0 * t.kc;
    for (int64_t j0 = 0; j0 < t.nc; j0 += NR) {
      const bool tail = t.btail != nullptr && j0 + NR > t.nc;
      micro<T, MR, NV, L>(t.kc, ap, tail ? t.btail : t.bp + (j0 / NR) * t.b_step, tail ? NR : t.ldb,
                          t.c + i0 * t.ldc + j0, t.ldc, std::min<int64_t>(MR, t.mc - i0),
                          std::min<int64_t>(NR, t.nc - j0), t.alpha, t.beta, t.read_c);
    }
  }
}

// The micro-kernel geometry per ISA: MR rows x NV vectors of L lanes; MR * NV accumulators plus
// NV B vectors and one broadcast fit the register file (32 zmm; 16 ymm/xmm).
#define SO_MACRO(name, target, T, MR, NV, L) \
  target void name(const Tile<T>& t) { macro<T, MR, NV, L>(t); }
#if SO_MM_V4
SO_MACRO(macro_f32_v4, SO_TARGET_V4, float, 12, 2, 16)
SO_MACRO(macro_f64_v4, SO_TARGET_V4, double, 12, 2, 8)
#endif
#if SO_MM_V3
SO_MACRO(macro_f32_v3, SO_TARGET_V3, float, 6, 2, 8)
SO_MACRO(macro_f64_v3, SO_TARGET_V3, double, 6, 2, 4)
#endif
SO_MACRO(macro_f32_base, , float, 6, 2, 4)
SO_MACRO(macro_f64_base, , double, 6, 2, 2)
#undef SO_MACRO

template <typename T>
struct Kernel {
  int64_t mr, nr, mc, nc;  // register tile; default task tile (rows of A, columns of B)
  void (*run)(const Tile<T>&);
};

template <typename T>
Kernel<T> pick_kernel() {
  constexpr bool f32 = std::is_same_v<T, float>;
#if SO_MM_PICK_AT_RUN_TIME
  __builtin_cpu_init();
  const bool v4 = __builtin_cpu_supports("x86-64-v4"), v3 = __builtin_cpu_supports("x86-64-v3");
#else
  constexpr bool v4 = SO_MM_V4, v3 = SO_MM_V3;
#endif
#if SO_MM_V4
  if (v4) {
    // A task's NC x KC block of B stays in L2 (480 KB); MC rows of A are 8 micro-panels.
    if constexpr (f32)
      return {12, 32, 96, 480, macro_f32_v4};
    else
      return {12, 16, 96, 240, macro_f64_v4};
  }
#endif
#if SO_MM_V3
  if (v3) {
    if constexpr (f32)
      return {6, 16, 96, 384, macro_f32_v3};
    else
      return {6, 8, 96, 192, macro_f64_v3};
  }
#endif
  (void)v4;
  (void)v3;
  if constexpr (f32)
    return {6, 8, 96, 256, macro_f32_base};
  else
    return {6, 4, 96, 128, macro_f64_base};
}

template <typename T>
const Kernel<T>& kernel() {
  static const Kernel<T> k = pick_kernel<T>();
  return k;
}

// A[rows, k0:k0+kc] (element strides rs, cs) into MR-tall micro-panels: dst[panel][p][i].
template <typename S, typename T>
void pack_a(const S* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, int64_t MR, T* dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += MR) {
    const int64_t mr = std::min(MR, mc - i0);
    T* d = dst + i0 * kc;
    if (cs == 1) {
      for (int64_t i = 0; i < mr; ++i) {
        const S* s = a + (i0 + i) * rs;
        for (int64_t p = 0; p < kc; ++p) d[p * MR + i] = static_cast<T>(s[p]);
      }
    } else {
      for (int64_t p = 0; p < kc; ++p)
        for (int64_t i = 0; i < mr; ++i) d[p * MR + i] = static_cast<T>(a[(i0 + i) * rs + p * cs]);
    }
    for (int64_t i = mr; i < MR; ++i)
      for (int64_t p = 0; p < kc; ++p) d[p * MR + i] = T(0);
  }
}

// B[k0:k0+kc, cols] into NR-wide micro-panels: dst[panel][p][j]; panels [pb, pe).
template <typename S, typename T>
void pack_b(const S* b, int64_t rs, int64_t cs, int64_t nc, int64_t kc, int64_t NR, int64_t pb, int64_t pe,
            T* dst) {
  for (int64_t panel = pb; panel < pe; ++panel) {
    const int64_t j0 = panel * NR, nr = std::min(NR, nc - j0);
    T* d = dst + j0 * kc;
    if (cs == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        const S* s = b + p * rs + j0;
        T* dp = d + p * NR;
        for (int64_t j = 0; j < nr; ++j) dp[j] = static_cast<T>(s[j]);
        for (int64_t j = nr; j < NR; ++j) dp[j] = T(0);
      }
    } else {
      for (int64_t j = 0; j < nr; ++j) {
        const S* s = b + (j0 + j) * cs;
        for (int64_t p = 0; p < kc; ++p) d[p * NR + j] = static_cast<T>(s[p * rs]);
      }
      for (int64_t j = nr; j < NR; ++j)
        for (int64_t p = 0; p < kc; ++p) d[p * NR + j] = T(0);
    }
  }
}

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Per-thread packing buffers (64-byte aligned, grown on demand, kept): an allocation per call
// costs more than packing a small problem. Slot 0 holds B (the calling thread's), slot 1 A.
template <typename T>
T* scratch(int slot, int64_t n) {
  struct Buffer {
    void* p = nullptr;
    size_t bytes = 0;
    ~Buffer() { ::operator delete(p, std::align_val_t{64}); }
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[slot];
  const size_t bytes = static_cast<size_t>(n) * sizeof(T);
  if (b.bytes < bytes) {
    ::operator delete(b.p, std::align_val_t{64});
    b.p = nullptr;
    b.bytes = 0;
    b.p = ::operator new(bytes, std::align_val_t{64});
    b.bytes = bytes;
  }
  return static_cast<T*>(b.p);
}

// Problems below this many multiply-adds run on one thread (thread start-up costs more).
constexpr int64_t kParallelMacs = int64_t{1} << 18;

template <typename S, typename T>
void gemm(int64_t m, int64_t n, int64_t k, const S* a, int64_t rsa, int64_t csa, const S* b, int64_t rsb,
          int64_t csb, T* c, int64_t ldc, T alpha, T beta) {
  const Kernel<T>& kern = kernel<T>();
  const int64_t MR = kern.mr, NR = kern.nr;
  const bool parallel = m * n * k >= kParallelMacs && at::get_num_threads() > 1 && !at::in_parallel_region();
  const int64_t threads = parallel ? at::get_num_threads() : 1;
  // Task tile: the kernel's default, halved (columns first) until there are 2 tasks per thread.
  int64_t MC = std::min(kern.mc, round_up(m, MR)), NC = std::min(kern.nc, round_up(n, NR));
  auto tasks_of = [&](int64_t mc, int64_t nc) { return ((m + mc - 1) / mc) * ((n + nc - 1) / nc); };
  while (tasks_of(MC, NC) < 2 * threads && NC > 4 * NR) NC = round_up(NC / 2, NR);
  while (tasks_of(MC, NC) < 2 * threads && MC > 2 * MR) MC = round_up(MC / 2, MR);
  const int64_t row_blocks = (m + MC - 1) / MC, col_blocks = (n + NC - 1) / NC,
                tasks = row_blocks * col_blocks;
  const int64_t kc_max = std::min(kKC, k), panels_b = (n + NR - 1) / NR;
  // B in place: with few rows of A, each element of B is used only m / MR times, so packing all
  // of B would cost about as much as the products; read its rows directly (unit column stride,
  // S == T) and pack only the partial last panel.
  const bool b_in_place = std::is_same_v<S, T> && csb == 1 && m <= 4 * MR;
  const int64_t full_panels = n / NR;
  T* bp = scratch<T>(0, (b_in_place ? 1 : panels_b) * NR * kc_max);

  for (int64_t pc = 0; pc < k; pc += kKC) {
    const int64_t kc = std::min(kKC, k - pc);
    const bool first = pc == 0;
    auto pack = [&](int64_t pb, int64_t pe) { pack_b(b + pc * rsb, rsb, csb, n, kc, NR, pb, pe, bp); };
    const T* b_panels = bp;
    int64_t b_step = NR * kc, ldb = NR;
    const T* btail = nullptr;
    if constexpr (std::is_same_v<S, T>) {
      if (b_in_place) {
        b_panels = b + pc * rsb, b_step = NR, ldb = rsb;
        if (full_panels < panels_b) {
          pack_b(b + pc * rsb + full_panels * NR, rsb, csb, n - full_panels * NR, kc, NR, 0, 1, bp);
          btail = bp;
        }
      }
    }
    auto compute = [&](int64_t tb, int64_t te) {
      T* ap = scratch<T>(1, MC * kc);
      int64_t packed_row_block = -1;
      for (int64_t task = tb; task < te; ++task) {
        const int64_t rb = task / col_blocks, cb = task % col_blocks;
        const int64_t i0 = rb * MC, j0 = cb * NC;
        const int64_t mc = std::min(MC, m - i0), nc = std::min(NC, n - j0);
        if (rb != packed_row_block) {
          pack_a(a + i0 * rsa + pc * csa, rsa, csa, mc, kc, MR, ap);
          packed_row_block = rb;
        }
        const Tile<T> tile{mc,
                           nc,
                           kc,
                           ap,
                           b_panels + (j0 / NR) * b_step,
                           b_step,
                           ldb,
                           j0 + nc == n ? btail : nullptr,
                           c + i0 * ldc + j0,
                           ldc,
                           alpha,
                           first ? beta : T(1),
                           !first || beta != T(0)};
        kern.run(tile);
      }
    };
    if (parallel) {
      if (!b_in_place) structgen::parallel_for(0, panels_b, 1, pack);
      structgen::parallel_for(0, tasks, 1, compute);
    } else {
      if (!b_in_place) pack(0, panels_b);
      compute(0, tasks);
    }
  }
}

// Integer dtypes: exact (wrapping) arithmetic, so summation order does not matter; rows of C in
// parallel, each a sum of rows of B scaled by A's entries (the inner loop vectorises), with K and
// N blocked so the rows of B in use stay in cache. B must have contiguous rows.
template <typename T>
void gemm_integral(int64_t m, int64_t n, int64_t k, const T* a, int64_t rsa, int64_t csa, const T* b,
                   int64_t rsb, T* c, int64_t ldc, T alpha, T beta) {
  constexpr int64_t kRows = 4, kCols = 1024, kDepth = 128;
  const int64_t grain = std::max<int64_t>(1, kParallelMacs / std::max<int64_t>(1, n * k));
  structgen::parallel_for(0, (m + kRows - 1) / kRows, grain, [&](int64_t rb, int64_t re) {
    for (int64_t r0 = rb * kRows; r0 < std::min(m, re * kRows); r0 += kRows) {
      const int64_t r1 = std::min(m, r0 + kRows);
      for (int64_t i = r0; i < r1; ++i) {
        T* ci = c + i * ldc;
        for (int64_t j = 0; j < n; ++j) ci[j] = beta == T(0) ? T(0) : static_cast<T>(beta * ci[j]);
      }
      for (int64_t j0 = 0; j0 < n; j0 += kCols) {
        const int64_t j1 = std::min(n, j0 + kCols);
        for (int64_t p0 = 0; p0 < k; p0 += kDepth) {
          const int64_t p1 = std::min(k, p0 + kDepth);
          for (int64_t i = r0; i < r1; ++i) {
            T* __restrict ci = c + i * ldc;
            for (int64_t p = p0; p < p1; ++p) {
              const T av = static_cast<T>(alpha * a[i * rsa + p * csa]);
              const T* __restrict bp = b + p * rsb;
              for (int64_t j = j0; j < j1; ++j) ci[j] = static_cast<T>(ci[j] + av * bp[j]);
            }
          }
        }
      }
    }
  });
}

}  // namespace

void mm_blocked(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& beta,
                const at::Scalar& alpha) {
  const int64_t m = c.size(0), n = c.size(1), k = a.size(1);
  TORCH_INTERNAL_ASSERT(a.size(0) == m && b.size(0) == k && b.size(1) == n);
  if (m == 0 || n == 0) return;
  const at::ScalarType dtype = c.scalar_type();
  TORCH_CHECK(!at::isComplexType(dtype), "mm_blocked: no kernel for ", dtype, "; use mm_aten");
  TORCH_CHECK(dtype != at::kBool, "mm_blocked: no kernel for Bool");
  // C needs unit column stride; otherwise compute into a contiguous copy.
  if (c.stride(1) != 1 && n > 1) {
    at::Tensor tmp = c.contiguous();
    mm_blocked(a, b, tmp, beta, alpha);
    const_cast<at::Tensor&>(c).copy_(tmp);
    return;
  }
  const int64_t ldc = m > 1 ? c.stride(0) : n;
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "mm_blocked", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    const auto al = alpha.to<opmath_t>(), be = beta.to<opmath_t>();
    const scalar_t* ap = a.const_data_ptr<scalar_t>();
    const scalar_t* bp = b.const_data_ptr<scalar_t>();
    scalar_t* cp = c.mutable_data_ptr<scalar_t>();
    if (k == 0 || al == opmath_t(0)) {  // nothing to multiply: C = beta * C, A and B unread
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          scalar_t& x = cp[i * ldc + j];
          x = be == opmath_t(0) ? scalar_t(0) : static_cast<scalar_t>(be * static_cast<opmath_t>(x));
        }
      return;
    }
    if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      gemm<scalar_t, scalar_t>(m, n, k, ap, a.stride(0), a.stride(1), bp, b.stride(0), b.stride(1), cp, ldc,
                               al, be);
    } else if constexpr (std::is_same_v<opmath_t, float>) {
      // float16 / bfloat16: accumulate all of K in float, round once.
      at::Tensor acc = c.new_empty({m, n}, c.options().dtype(at::kFloat));
      float* accp = acc.data_ptr<float>();
      gemm<scalar_t, float>(m, n, k, ap, a.stride(0), a.stride(1), bp, b.stride(0), b.stride(1), accp, n,
                            1.0f, 0.0f);
      structgen::parallel_for(0, m, std::max<int64_t>(1, cpu::kGrainSize / n), [&](int64_t ib, int64_t ie) {
        for (int64_t i = ib; i < ie; ++i)
          for (int64_t j = 0; j < n; ++j) {
            scalar_t& x = cp[i * ldc + j];
            const float r = al * accp[i * n + j];
            x = static_cast<scalar_t>(be == 0.0f ? r : r + be * static_cast<float>(x));
          }
      });
    } else {
      const at::Tensor bc = b.stride(1) == 1 ? b : b.contiguous();
      gemm_integral<scalar_t>(m, n, k, ap, a.stride(0), a.stride(1), bc.const_data_ptr<scalar_t>(),
                              bc.stride(0), cp, ldc, al, be);
    }
  });
}

void mm_aten(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& beta,
             const at::Scalar& alpha) {
  at::Tensor out = c;
  if (beta.toComplexDouble() == 0.0 && alpha.toComplexDouble() == 1.0) {
    at::_ops::mm_out::call(a, b, out);
  } else {
    at::_ops::addmm_out::call(c, a, b, beta, alpha, out);  // beta == 0 ignores c's values, as documented
  }
}

const char* mm_kernel_name(MmKernel k) { return k == MmKernel::blocked ? "blocked" : "aten"; }

MmKernel mm_choose(int64_t m, int64_t n, int64_t k, at::ScalarType dtype) {
  static const int pinned = [] {
    const char* env = std::getenv("STRUCTOPS_MM_KERNEL");
    if (env == nullptr || *env == '\0') return -1;
    const std::string_view v(env);
    TORCH_CHECK(v == "blocked" || v == "aten", "STRUCTOPS_MM_KERNEL must be 'blocked' or 'aten', got '", v,
                "'");
    return v == "blocked" ? 0 : 1;
  }();
  if (at::isComplexType(dtype) || dtype == at::kBool) return MmKernel::aten;
  if (pinned >= 0) return pinned == 0 ? MmKernel::blocked : MmKernel::aten;
  if (at::isIntegralType(dtype, /*includeBool=*/false)) return MmKernel::blocked;  // ATen's are plain loops
  // Measured (tools/bench_linalg.py): fewer than 32 columns leave most of a 32-lane register
  // tile idle, a single row is a GEMV, and below ~64^3 multiply-adds the packing and the call
  // cost more than MKL's small-matrix path.
  // float16/bfloat16: ATen's oneDNN path uses the CPU's native bf16/fp16 dot products (2x our
  // float micro-kernel on AVX512-BF16).
  if (dtype == at::kHalf || dtype == at::kBFloat16) return MmKernel::aten;
  if (n < 32 || m < 4 || m * n * k <= kParallelMacs) return MmKernel::aten;
  return MmKernel::blocked;
}

void mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& beta,
        const at::Scalar& alpha) {
  if (mm_choose(c.size(0), c.size(1), a.size(1), c.scalar_type()) == MmKernel::blocked) {
    mm_blocked(a, b, c, beta, alpha);
  } else {
    mm_aten(a, b, c, beta, alpha);
  }
}

}  // namespace structops::cpu
