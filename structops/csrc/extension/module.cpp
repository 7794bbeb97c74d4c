// structops._C: structops' own Python module, linked to libstructops_ops.so (loading it registers
// every operator): the meta step masked_select's fake impl reuses, and structops.autotune's view
// of this extension's autotuner (each extension built on the runtime has its own).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <ops/index/meta.h>
#include <structgen/autotune.h>
#include <torch/csrc/utils/pybind.h>  // Tensor and SymInt <-> Python

#include <c10/util/Exception.h>

#include <vector>

namespace py = pybind11;

namespace {

// masked_select's meta checks for its fake impl (python/structops/fake.py): the shape, or the
// meta function's own error, on fake tensors' SymInts.
std::vector<c10::SymInt> masked_select_shape(const at::Tensor& self, const at::Tensor& mask) {
  try {
    const auto shape = structops::meta::masked_select_shape(self, mask);
    return {shape.begin(), shape.end()};
  } catch (const c10::Error& e) {
    throw std::runtime_error(e.what_without_backtrace());  // the text torch.ops calls raise
  }
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "structops native library: operators are registered in torch.ops.structops on import";
  m.def("masked_select_shape", &masked_select_shape, py::arg("self"), py::arg("mask"),
        "masked_select's meta checks and broadcast shape (for its fake impl).");

  // structops.autotune's native half (csrc/runtime/autotune/).
  namespace at_ = structgen::autotune;
  m.def("_autotune_decisions", [] {
    py::list out;
    for (const at_::Decision& d : at_::decisions()) {
      py::list timings;
      for (const at_::Timing& t : d.timings) {
        timings.append(
            py::dict(py::arg("variant") = t.variant,
                     py::arg("us") = t.us >= 0 ? py::object(py::float_(t.us)) : py::object(py::none()),
                     py::arg("error") = t.error));
      }
      out.append(py::dict(py::arg("op") = d.op, py::arg("device") = d.device, py::arg("dtype") = d.dtype,
                          py::arg("key") = std::vector<int64_t>(d.key.begin(), d.key.end()),
                          py::arg("key_text") = d.key_text, py::arg("pick") = d.pick,
                          py::arg("source") = d.source, py::arg("tuning_ms") = d.tuning_ms,
                          py::arg("timings") = timings));
    }
    return out;
  });
  m.def("_autotune_clear_memory", &at_::clear_memory);
  m.def("_autotune_judge", [](const std::vector<std::vector<double>>& rounds) {
    const at_::Verdict v = at_::judge(rounds);
    return py::make_tuple(v.pick, v.resolved);
  });
  m.def("_autotune_set_pin", &at_::set_pin, py::arg("op"), py::arg("variant"));
  m.def("_autotune_cache_dir", &at_::cache_dir);
  m.def("_autotune_counters", [] { return py::make_tuple(at_::timed_count(), at_::disk_hits()); });
}
