// structops._C: loading it registers every operator (static TORCH_LIBRARY blocks in this
// library). Its one Python function bridges C++ warnings to Python: torch.ops.* calls do not
// install torch's PyWarningHandler, so a TORCH_WARN inside them only reaches stderr. Calls made
// through structops.* run under call_with_warnings, which collects c10 warnings with a
// thread-local c10::WarningHandler and re-raises them with PyErr_WarnEx.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <ops/index/meta.h>
#include <structops/autotune.h>
#include <torch/csrc/utils/pybind.h>  // Tensor and SymInt <-> Python

#include <c10/util/Exception.h>

#include <variant>
#include <vector>

namespace py = pybind11;

namespace {

class CollectWarnings final : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override { warnings.push_back(warning); }
  std::vector<c10::Warning> warnings;
};

// stacklevel 2: attribute the warning to the caller of the structops.* function. False with the
// Python error set when a warning became an error (-W error).
bool emit(const std::vector<c10::Warning>& warnings) {
  for (const auto& w : warnings) {
    PyObject* category = std::holds_alternative<c10::DeprecationWarning>(w.type())
                             ? PyExc_DeprecationWarning
                             : PyExc_UserWarning;
    if (PyErr_WarnEx(category, w.msg().c_str(), 2) < 0) return false;
  }
  return true;
}

// call_with_warnings(fn, args, kwargs): fn(*args, **kwargs) with c10 warnings collected and raised
// as Python warnings. A METH_FASTCALL function, not a pybind11 one: pybind's argument casting and
// its copies of args and kwargs cost 0.4 us of a small out= call.
PyObject* call_with_warnings(PyObject* /*module*/, PyObject* const* argv, Py_ssize_t argc) {
  if (argc != 3 || !PyTuple_Check(argv[1]) || !PyDict_Check(argv[2])) {
    PyErr_SetString(PyExc_TypeError, "call_with_warnings(fn, args: tuple, kwargs: dict)");
    return nullptr;
  }
  CollectWarnings collector;
  PyObject* result = nullptr;
  {
    c10::WarningUtils::WarningHandlerGuard guard(&collector);
    result = PyObject_Call(argv[0], argv[1], argv[2]);
  }
  if (collector.warnings.empty()) return result;
  if (result == nullptr) {  // the call's error stays: a warning turned error meanwhile does not replace it
#if PY_VERSION_HEX >= 0x030C0000
    PyObject* error = PyErr_GetRaisedException();
    if (!emit(collector.warnings)) PyErr_Clear();
    PyErr_SetRaisedException(error);
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (!emit(collector.warnings)) PyErr_Clear();
    PyErr_Restore(type, value, traceback);
#endif
    return nullptr;
  }
  if (!emit(collector.warnings)) {
    Py_DECREF(result);
    return nullptr;
  }
  return result;
}

PyMethodDef call_with_warnings_def{
    "call_with_warnings", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&call_with_warnings)),
    METH_FASTCALL, "Call fn(*args, **kwargs), turning C++ warnings raised inside into Python warnings."};

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

extern PyMethodDef structops_entry_def;  // entry.cpp

PYBIND11_MODULE(_C, m) {
  m.doc() = "structops native library: operators are registered in torch.ops.structops on import";
  m.def("masked_select_shape", &masked_select_shape, py::arg("self"), py::arg("mask"),
        "masked_select's meta checks and broadcast shape (for its fake impl).");
  m.add_object("call_with_warnings",
               py::reinterpret_steal<py::object>(PyCFunction_NewEx(&call_with_warnings_def, nullptr, nullptr)));
  m.add_object("entry", py::reinterpret_steal<py::object>(PyCFunction_NewEx(&structops_entry_def, nullptr, nullptr)));

  // structops.autotune's native half (csrc/runtime/autotune/).
  namespace at_ = structops::autotune;
  m.def("_autotune_decisions", [] {
    py::list out;
    for (const at_::Decision& d : at_::decisions()) {
      py::list timings;
      for (const at_::Timing& t : d.timings) {
        timings.append(py::dict(py::arg("variant") = t.variant,
                                py::arg("us") = t.us >= 0 ? py::object(py::float_(t.us)) : py::object(py::none()),
                                py::arg("error") = t.error));
      }
      out.append(py::dict(py::arg("op") = d.op, py::arg("device") = d.device, py::arg("dtype") = d.dtype,
                          py::arg("key") = std::vector<int64_t>(d.key.begin(), d.key.end()),
                          py::arg("key_text") = d.key_text, py::arg("pick") = d.pick, py::arg("source") = d.source,
                          py::arg("tuning_ms") = d.tuning_ms, py::arg("timings") = timings));
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
