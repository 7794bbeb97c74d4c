// structgen._C, the runtime's Python module, shared by every generated package (it registers no
// operator): entry() makes each <package>.<name> a C function (entry.cpp), and call_with_warnings
// bridges C++ warnings to Python: torch.ops.* calls do not install torch's PyWarningHandler, so a
// TORCH_WARN inside them only reaches stderr. Calls made through <package>.* run under
// call_with_warnings, which collects c10 warnings with a thread-local c10::WarningHandler and
// re-raises them with PyErr_WarnEx.

#include <pybind11/pybind11.h>

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

// stacklevel 2: attribute the warning to the caller of the <package>.* function. False with the
// Python error set when a warning became an error (-W error).
bool emit(const std::vector<c10::Warning>& warnings) {
  for (const auto& w : warnings) {
    PyObject* category = std::holds_alternative<c10::DeprecationWarning>(w.type()) ? PyExc_DeprecationWarning
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

}  // namespace

extern PyMethodDef entry_def;  // entry.cpp

PYBIND11_MODULE(_C, m) {
  m.doc() = "the runtime of generated operator packages: C entries and the warning bridge";
  m.add_object("call_with_warnings", py::reinterpret_steal<py::object>(
                                         PyCFunction_NewEx(&call_with_warnings_def, nullptr, nullptr)));
  m.add_object("entry", py::reinterpret_steal<py::object>(PyCFunction_NewEx(&entry_def, nullptr, nullptr)));
}
