// <package>.<name> as a C function: the eager call path of every generated Python function.
//
// torch.add is a C function that parses its arguments and calls the kernel; a Python function
// that calls an OpOverload's C++ callable pays for a Python frame and for torch.ops' generic,
// schema-driven argument conversion (about 0.6 us of a 1.7 us small call). An entry binds the
// common call here, with the rules structgen._dispatch._fits states in Python (the manifest's
// parameter kinds, the first overload that fits), boxes it and calls the operator. Every call it
// cannot decide the same way goes to the generated Python function, its `fallback`, unchanged:
// a Tensor subclass or an active torch function mode (__torch_function__ must see the call), a
// kind of value this file does not convert (Tensor?[], a list of other values), a number
// that overflows int64, or no overload that fits (the fallback raises torch's TypeError, or
// reads a number as a Tensor, as torch.add(2, x) does). Under torch.compile Dynamo traces the
// fallback instead (structgen._dispatch registers it with torch.compiler.substitute_in_graph).
#include <Python.h>

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <c10/util/SmallVector.h>

#include <optional>
#include <string>
#include <vector>

namespace {

// structgen._dispatch._FITS's kinds, in codegen/api/python.py parser_kind's spelling.
enum class Kind { Tensor, Number, Bool, Int, Float, Ints, Ints1, Dtype, Str, Tensors, Other };

Kind kind_named(const std::string& name) {
  static const std::pair<const char*, Kind> kinds[] = {
      {"Tensor", Kind::Tensor}, {"number", Kind::Number},  {"bool", Kind::Bool},   {"int", Kind::Int},
      {"float", Kind::Float},   {"ints", Kind::Ints},      {"ints1", Kind::Ints1}, {"dtype", Kind::Dtype},
      {"str", Kind::Str},       {"tensors", Kind::Tensors}};
  for (const auto& [text, kind] : kinds) {
    if (name == text) return kind;
  }
  return Kind::Other;  // "any" (Tensor?[]): the fallback binds it
}

struct Param {
  PyObject* name;  // interned
  Kind kind;
  bool optional, has_default, kwarg_only;
};

struct Overload {
  c10::OperatorHandle op;
  std::vector<Param> params;
  Py_ssize_t positional;  // how many parameters may be given positionally
};

struct Entry {
  std::string name, doc, package;  // package: the module it belongs to (myops)
  PyMethodDef def;
  PyObject* fallback;  // owned
  std::vector<Overload> overloads;
};

PyObject* tensor_types[2] = {nullptr, nullptr};  // torch.Tensor, torch.nn.Parameter (no __torch_function__)

bool plain_tensor(PyObject* v) {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(v));
  return type == tensor_types[0] || type == tensor_types[1];
}

enum class Fit { No, Yes, Undecided };

bool is_int(PyObject* v) { return PyLong_Check(v) && !PyBool_Check(v); }

bool all_ints(PyObject* v) {
  if (!PyList_Check(v) && !PyTuple_Check(v)) return false;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
  PyObject** items = PySequence_Fast_ITEMS(v);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!is_int(items[i])) return false;
  }
  return true;
}

// A list or tuple of tensors; Undecided if one of them is a subclass (__torch_function__).
Fit all_tensors(PyObject* v) {
  if (!PyList_Check(v) && !PyTuple_Check(v)) return Fit::No;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
  PyObject** items = PySequence_Fast_ITEMS(v);
  Fit result = Fit::Yes;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (plain_tensor(items[i])) continue;
    if (!THPVariable_Check(items[i])) return Fit::No;
    result = Fit::Undecided;
  }
  return result;
}

Fit fits(const Param& p, PyObject* v) {
  if (p.optional && v == Py_None) return Fit::Yes;
  switch (p.kind) {
    case Kind::Tensor:
      if (plain_tensor(v)) return Fit::Yes;
      return THPVariable_Check(v) ? Fit::Undecided : Fit::No;  // a subclass: __torch_function__
    case Kind::Number:
      return PyBool_Check(v) || PyLong_Check(v) || PyFloat_Check(v) || PyComplex_Check(v) ? Fit::Yes
                                                                                          : Fit::No;
    case Kind::Bool:
      return PyBool_Check(v) ? Fit::Yes : Fit::No;
    case Kind::Int:
      return is_int(v) ? Fit::Yes : Fit::No;
    case Kind::Float:
      return is_int(v) || PyFloat_Check(v) ? Fit::Yes : Fit::No;
    case Kind::Ints:
      return all_ints(v) ? Fit::Yes : Fit::No;
    case Kind::Ints1:
      return is_int(v) || all_ints(v) ? Fit::Yes : Fit::No;
    case Kind::Dtype:
      return Py_TYPE(v) == &THPDtypeType ? Fit::Yes : Fit::No;
    case Kind::Str:
      return PyUnicode_Check(v) ? Fit::Yes : Fit::No;
    case Kind::Tensors:
      return all_tensors(v);
    case Kind::Other:
      return Fit::Undecided;
  }
  return Fit::Undecided;
}

// The call's arguments as an overload's parameters see them: positional values, then keywords.
// out=None counts as not given, as the generated functions read it (the functional overload).
struct Call {
  PyObject* const* args;
  Py_ssize_t nargs;
  PyObject* kwnames;  // a tuple, or nullptr
  Py_ssize_t nkw() const { return kwnames ? PyTuple_GET_SIZE(kwnames) : 0; }
  bool given(Py_ssize_t k) const {
    return args[nargs + k] != Py_None ||
           PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "out") != 0;
  }
  // The keyword value named `name`, or nullptr when not given.
  PyObject* keyword(PyObject* name) const {
    for (Py_ssize_t k = 0; k < nkw(); ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      if (given(k) && (key == name || PyUnicode_Compare(key, name) == 0)) return args[nargs + k];
    }
    return nullptr;
  }
};

// Whether the call binds to `o`; `values` gets each parameter's value (nullptr: its default).
Fit binds(const Overload& o, const Call& call, c10::SmallVector<PyObject*, 8>& values) {
  if (call.nargs > o.positional) return Fit::No;
  for (Py_ssize_t k = 0; k < call.nkw(); ++k) {  // every keyword names a parameter
    if (!call.given(k)) continue;
    PyObject* key = PyTuple_GET_ITEM(call.kwnames, k);
    bool known = false;
    for (const Param& p : o.params) known = known || key == p.name || PyUnicode_Compare(key, p.name) == 0;
    if (!known) return Fit::No;
  }
  values.assign(o.params.size(), nullptr);
  Fit result = Fit::Yes;
  for (size_t i = 0; i < o.params.size(); ++i) {
    const Param& p = o.params[i];
    PyObject* keyword = call.keyword(p.name);
    PyObject* v = nullptr;
    if (!p.kwarg_only && static_cast<Py_ssize_t>(i) < call.nargs) {
      if (keyword != nullptr) return Fit::No;  // given twice
      v = call.args[i];
    } else if (keyword != nullptr) {
      v = keyword;
    } else if (!p.has_default) {
      return Fit::No;
    } else {
      continue;
    }
    const Fit f = fits(p, v);
    if (f == Fit::No) return Fit::No;
    if (f == Fit::Undecided) result = Fit::Undecided;
    values[i] = v;
  }
  return result;
}

std::vector<int64_t> ints_of(PyObject* v) {
  if (PyLong_Check(v)) return {PyLong_AsLongLong(v)};
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
  PyObject** items = PySequence_Fast_ITEMS(v);
  std::vector<int64_t> result(n);
  for (Py_ssize_t i = 0; i < n; ++i) result[i] = PyLong_AsLongLong(items[i]);
  return result;
}

c10::IValue value_of(const Param& p, PyObject* v) {
  if (v == Py_None) return {};
  switch (p.kind) {
    case Kind::Tensor:
      return THPVariable_Unpack(v);
    case Kind::Number:
      if (PyBool_Check(v)) return c10::Scalar(v == Py_True);
      if (PyLong_Check(v)) return c10::Scalar(static_cast<int64_t>(PyLong_AsLongLong(v)));
      if (PyFloat_Check(v)) return c10::Scalar(PyFloat_AS_DOUBLE(v));
      return c10::Scalar(c10::complex<double>(PyComplex_RealAsDouble(v), PyComplex_ImagAsDouble(v)));
    case Kind::Bool:
      return v == Py_True;
    case Kind::Int:
      return static_cast<int64_t>(PyLong_AsLongLong(v));
    case Kind::Float:
      return PyFloat_AsDouble(v);
    case Kind::Ints:
    case Kind::Ints1:
      return ints_of(v);
    case Kind::Dtype:
      return reinterpret_cast<THPDtype*>(v)->scalar_type;
    case Kind::Str: {
      Py_ssize_t size = 0;
      const char* text = PyUnicode_AsUTF8AndSize(v, &size);
      return text ? std::string(text, size) : std::string();
    }
    case Kind::Tensors: {
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
      PyObject** items = PySequence_Fast_ITEMS(v);
      c10::List<at::Tensor> tensors;
      tensors.reserve(n);
      for (Py_ssize_t i = 0; i < n; ++i) tensors.push_back(THPVariable_Unpack(items[i]));
      return tensors;
    }
    case Kind::Other:
      break;
  }
  TORCH_INTERNAL_ASSERT(false, "entry: a value of a kind it does not convert");
}

// The boxed arguments of `o` for the values binds() found, or nullopt with no Python error set
// when a value does not convert (an int beyond int64: the fallback raises torch's error for it).
std::optional<torch::jit::Stack> stack_of(const Overload& o, const c10::SmallVector<PyObject*, 8>& values) {
  torch::jit::Stack stack;
  stack.reserve(o.params.size());
  const auto& arguments = o.op.schema().arguments();
  for (size_t i = 0; i < o.params.size(); ++i) {
    if (values[i] == nullptr) {
      stack.push_back(*arguments[i].default_value());
      continue;
    }
    stack.push_back(value_of(o.params[i], values[i]));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return std::nullopt;
    }
  }
  return stack;
}

PyObject* wrap(c10::IValue&& v) {
  if (v.isTensor()) return THPVariable_Wrap(std::move(v).toTensor());
  if (v.isNone()) Py_RETURN_NONE;
  TORCH_INTERNAL_ASSERT(v.isTensorList(), "entry: a return it does not convert: ", v.tagKind());
  const auto tensors = std::move(v).toTensorVector();
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(tensors.size()));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    PyObject* t = THPVariable_Wrap(tensors[i]);
    if (t == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), t);
  }
  return list;
}

PyObject* results(torch::jit::Stack& stack) {
  if (stack.empty()) Py_RETURN_NONE;  // a `-> ()` overload, as torch.ops returns it
  if (stack.size() == 1) return wrap(std::move(stack[0]));
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(stack.size()));
  if (tuple == nullptr) return nullptr;
  for (size_t i = 0; i < stack.size(); ++i) {
    PyObject* item = wrap(std::move(stack[i]));
    if (item == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), item);
  }
  return tuple;
}

// The function's `self`: owns the Entry. Pickling a builtin function pickles getattr(self, name),
// so self pickles as its package's module: myops.add pickles by its name, as torch.add does.
struct EntryObject {
  PyObject_HEAD Entry* entry;
};

Entry* entry_of(PyObject* self) { return reinterpret_cast<EntryObject*>(self)->entry; }

void free_entry(PyObject* self) {
  Entry* entry = entry_of(self);
  if (entry != nullptr) {
    Py_XDECREF(entry->fallback);
    for (auto& o : entry->overloads) {
      for (auto& p : o.params) Py_XDECREF(p.name);
    }
    delete entry;
  }
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* reduce_entry(PyObject* self, PyObject* /*unused*/) {
  PyObject* importlib = PyImport_ImportModule("importlib");
  if (importlib == nullptr) return nullptr;
  PyObject* import_module = PyObject_GetAttrString(importlib, "import_module");
  Py_DECREF(importlib);
  if (import_module == nullptr) return nullptr;
  return Py_BuildValue("(N(s))", import_module, entry_of(self)->package.c_str());
}

PyMethodDef entry_methods[] = {{"__reduce__", reduce_entry, METH_NOARGS, nullptr},
                               {nullptr, nullptr, 0, nullptr}};
PyType_Slot entry_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&free_entry)}, {Py_tp_methods, entry_methods}, {0, nullptr}};
PyType_Spec entry_spec{"structgen._C.Entry", sizeof(EntryObject), 0, Py_TPFLAGS_DEFAULT, entry_slots};
PyObject* entry_type = nullptr;

PyObject* call_entry(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  Entry* entry = entry_of(self);
  const Call call{args, PyVectorcall_NARGS(nargsf), kwnames};
  auto fallback = [&] { return PyObject_Vectorcall(entry->fallback, args, nargsf, kwnames); };
  if (at::impl::torch_function_mode_enabled()) return fallback();
  const Overload* picked = nullptr;
  c10::SmallVector<PyObject*, 8> values;
  for (const Overload& o : entry->overloads) {
    const Fit f = binds(o, call, values);
    if (f == Fit::Undecided) return fallback();
    if (f == Fit::Yes) {
      picked = &o;
      break;
    }
  }
  if (picked == nullptr) return fallback();
  HANDLE_TH_ERRORS
  auto stack = stack_of(*picked, values);
  if (!stack) return fallback();
  {
    // As torch's own bindings do: other Python threads run while the kernel does.
    PyThreadState* state = PyEval_SaveThread();
    struct Restore {
      PyThreadState* state;
      ~Restore() { PyEval_RestoreThread(state); }
    } restore{state};
    picked->op.callBoxed(*stack);
  }
  return results(*stack);
  END_HANDLE_TH_ERRORS_RET(nullptr)
}

std::string text(PyObject* v) {
  const char* s = PyUnicode_AsUTF8(v);
  if (s == nullptr) throw std::invalid_argument("a str was expected");
  return s;
}

// entry(name, doc, fallback, overloads, tensor types, package): overloads is a tuple of (qualified
// operator name, overload name, parameters), parameters as structgen._dispatch reads them; package:
// the module the function is an attribute of (its __module__, and what it pickles by).
PyObject* make_entry(PyObject* /*module*/, PyObject* const* argv, Py_ssize_t argc) {
  if (argc != 6 || !PyTuple_Check(argv[3]) || !PyTuple_Check(argv[4]) || PyTuple_GET_SIZE(argv[4]) != 2) {
    PyErr_SetString(PyExc_TypeError,
                    "entry(name, doc, fallback, overloads: tuple, (Tensor, Parameter), package)");
    return nullptr;
  }
  HANDLE_TH_ERRORS
  for (int i = 0; i < 2; ++i) {
    if (tensor_types[i] == nullptr) tensor_types[i] = Py_NewRef(PyTuple_GET_ITEM(argv[4], i));
  }
  auto entry = std::make_unique<Entry>();
  entry->name = text(argv[0]);
  entry->doc = text(argv[1]);
  entry->package = text(argv[5]);
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(argv[3]); ++k) {
    PyObject* spec = PyTuple_GET_ITEM(argv[3], k);
    TORCH_CHECK_TYPE(PyTuple_Check(spec) && PyTuple_GET_SIZE(spec) == 3,
                     "entry: an overload is (name, overload, params)");
    const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(text(PyTuple_GET_ITEM(spec, 0)).c_str(),
                                                                   text(PyTuple_GET_ITEM(spec, 1)).c_str());
    Overload o{op, {}, 0};
    PyObject* params = PyTuple_GET_ITEM(spec, 2);
    const auto& arguments = op.schema().arguments();
    TORCH_CHECK(PyTuple_GET_SIZE(params) == static_cast<Py_ssize_t>(arguments.size()), "entry: ", op.schema(),
                " has ", arguments.size(), " arguments");
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(params); ++i) {
      PyObject* p = PyTuple_GET_ITEM(params, i);  // (name, kind, optional, has default, keyword-only)
      const std::string name = text(PyTuple_GET_ITEM(p, 0));
      TORCH_CHECK(name == arguments[i].name(), "entry: ", op.schema(), ": argument ", i, " is not ", name);
      PyObject* interned = PyUnicode_InternFromString(name.c_str());
      o.params.push_back(
          {interned, kind_named(text(PyTuple_GET_ITEM(p, 1))), PyObject_IsTrue(PyTuple_GET_ITEM(p, 2)) == 1,
           PyObject_IsTrue(PyTuple_GET_ITEM(p, 3)) == 1, PyObject_IsTrue(PyTuple_GET_ITEM(p, 4)) == 1});
      TORCH_CHECK(!o.params.back().has_default || arguments[i].default_value(), "entry: ", name,
                  " has no default");
      if (!o.params.back().kwarg_only) ++o.positional;
    }
    entry->overloads.push_back(std::move(o));
  }
  entry->fallback = Py_NewRef(argv[2]);
  entry->def = {entry->name.c_str(), reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&call_entry)),
                METH_FASTCALL | METH_KEYWORDS, entry->doc.c_str()};
  PyMethodDef* def = &entry->def;
  if (entry_type == nullptr && (entry_type = PyType_FromSpec(&entry_spec)) == nullptr) return nullptr;
  PyObject* self = PyType_GenericAlloc(reinterpret_cast<PyTypeObject*>(entry_type), 0);
  if (self == nullptr) return nullptr;
  reinterpret_cast<EntryObject*>(self)->entry = entry.release();
  PyObject* module_name = PyUnicode_FromString(reinterpret_cast<EntryObject*>(self)->entry->package.c_str());
  PyObject* function = module_name ? PyCFunction_NewEx(def, self, module_name) : nullptr;
  Py_DECREF(self);
  Py_XDECREF(module_name);
  return function;
  END_HANDLE_TH_ERRORS_RET(nullptr)
}

}  // namespace

PyMethodDef entry_def{
    "entry", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&make_entry)), METH_FASTCALL,
    "entry(name, doc, fallback, overloads, (Tensor, Parameter), package): <package>.<name> as a C function "
    "(entry.cpp)."};
