// _tandem_fastrun: Session.run's call into libtandem as one CPython function, so a tiny
// model's run is not dominated by ctypes (about 20 us of argument conversion, wrapping
// and copying per call for a 3-100-3 MLP). The package (python/tandem/_fastrun.py) loads
// it when it sits next to the loaded libtandem and was built for this interpreter, and
// falls back to the ctypes path otherwise.
//
// It does not link libtandem: bind() receives the addresses of the C functions from the
// ctypes-loaded library, so both paths use one copy of the library and its handles.
//
// run(session, feeds, output_names) returns
//   - (arrays, raw): the outputs in order; raw is true when some entries are still tensor
//     handles (ints: a dtype NumPy lacks, or a view that failed) for the caller to convert
//     and release;
//   - an int: a TandemStatus* of a failed wrap or run, for the caller to raise;
//   - None: feeds it does not take as they are (not a dict of str to C-contiguous, aligned,
//     native-endian ndarrays of a supported dtype), for the caller's general path.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

// The C API functions used (include/tandem/tandem.h), bound at run time.
using Status = void*;
struct Api {
  Status (*tensor_wrap)(int, const int64_t*, size_t, void*, size_t, void**) = nullptr;
  void (*tensor_release)(void*) = nullptr;
  Status (*session_run)(void*, const char* const*, void* const*, size_t, const char* const*, size_t,
                        void**) = nullptr;
  Status (*tensor_host_view)(void*, int*, size_t*, int64_t*, size_t, void**, size_t*) = nullptr;
  void (*status_release)(Status) = nullptr;
} api;

constexpr int kMaxRank = 16;

// TandemDataType -> NumPy type number (-1: none).
int NumpyType(int tandem_type) {
  switch (tandem_type) {
    case 1: return NPY_FLOAT32;
    case 2: return NPY_UINT8;
    case 3: return NPY_INT8;
    case 4: return NPY_UINT16;
    case 5: return NPY_INT16;
    case 6: return NPY_INT32;
    case 7: return NPY_INT64;
    case 9: return NPY_BOOL;
    case 10: return NPY_FLOAT16;
    case 11: return NPY_FLOAT64;
    case 12: return NPY_UINT32;
    case 13: return NPY_UINT64;
    default: return -1;
  }
}

int TandemType(int numpy_type) {
  for (int t = 1; t <= 13; ++t)
    if (NumpyType(t) == numpy_type) return t;
  return -1;
}

template <typename T>
T Address(PyObject* o) {
  return reinterpret_cast<T>(PyLong_AsVoidPtr(o));
}

PyObject* Bind(PyObject*, PyObject* args) {
  PyObject *wrap, *release, *run, *view, *status_release;
  if (!PyArg_ParseTuple(args, "OOOOO", &wrap, &release, &run, &view, &status_release)) return nullptr;
  api.tensor_wrap = Address<decltype(api.tensor_wrap)>(wrap);
  api.tensor_release = Address<decltype(api.tensor_release)>(release);
  api.session_run = Address<decltype(api.session_run)>(run);
  api.tensor_host_view = Address<decltype(api.tensor_host_view)>(view);
  api.status_release = Address<decltype(api.status_release)>(status_release);
  if (PyErr_Occurred()) return nullptr;
  Py_RETURN_NONE;
}

// References kept for one call (released with the GIL held): the run releases the GIL,
// and another thread may change the dict or list the names and arrays came from.
struct Held {
  std::vector<PyObject*> objects;
  PyObject* Keep(PyObject* o) {
    objects.push_back(Py_NewRef(o));
    return o;
  }
  ~Held() {
    for (PyObject* o : objects) Py_DECREF(o);
  }
};

// Input tensors wrapped for one call, released on the way out.
struct Wrapped {
  std::vector<const char*> names;
  std::vector<void*> tensors;
  Held held;  // their names and arrays
  ~Wrapped() {
    for (void* t : tensors) api.tensor_release(t);
  }
};

// Wraps the feeds into `w`; false when it cannot (with *status set on a wrap failure).
bool WrapFeeds(PyObject* feeds, Wrapped& w, Status* status) {
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(feeds, &pos, &key, &value)) {
    if (!PyUnicode_Check(key) || !PyArray_CheckExact(value)) return false;
    auto* arr = reinterpret_cast<PyArrayObject*>(value);
    const int flags = PyArray_FLAGS(arr);
    if (!(flags & NPY_ARRAY_C_CONTIGUOUS) || !(flags & NPY_ARRAY_ALIGNED) || !PyArray_ISNOTSWAPPED(arr) ||
        PyArray_NDIM(arr) > kMaxRank)
      return false;
    const int type = TandemType(PyArray_TYPE(arr));
    const char* name = PyUnicode_AsUTF8(key);
    if (type < 0 || !name) {
      PyErr_Clear();
      return false;
    }
    int64_t dims[kMaxRank];
    const int rank = PyArray_NDIM(arr);
    for (int d = 0; d < rank; ++d) dims[d] = PyArray_DIMS(arr)[d];
    void* tensor = nullptr;
    *status = api.tensor_wrap(type, dims, static_cast<size_t>(rank), PyArray_DATA(arr),
                              static_cast<size_t>(PyArray_NBYTES(arr)), &tensor);
    if (*status) return false;
    w.names.push_back(name);
    w.tensors.push_back(tensor);
    w.held.Keep(key);
    w.held.Keep(value);
  }
  return true;
}

// A new array holding a copy of host tensor `t` (released here), or nullptr when NumPy
// has no such type or the view fails (the caller keeps `t`).
PyObject* TakeOutput(void* t) {
  int type = 0;
  size_t rank = 0, bytes = 0;
  int64_t dims[kMaxRank];
  void* data = nullptr;
  Status s = api.tensor_host_view(t, &type, &rank, dims, kMaxRank, &data, &bytes);
  if (s) {
    api.status_release(s);
    return nullptr;
  }
  const int npy = NumpyType(type);
  if (npy < 0) return nullptr;
  npy_intp shape[kMaxRank];
  for (size_t d = 0; d < rank; ++d) shape[d] = static_cast<npy_intp>(dims[d]);
  PyObject* out = PyArray_SimpleNew(static_cast<int>(rank), shape, npy);
  if (!out) return nullptr;
  auto* arr = reinterpret_cast<PyArrayObject*>(out);
  if (static_cast<size_t>(PyArray_NBYTES(arr)) > bytes) {
    Py_DECREF(out);
    return nullptr;  // the general path reports it
  }
  if (PyArray_NBYTES(arr)) std::memcpy(PyArray_DATA(arr), data, static_cast<size_t>(PyArray_NBYTES(arr)));
  api.tensor_release(t);
  return out;
}

PyObject* Run(PyObject*, PyObject* args) {
  PyObject *session_obj, *feeds, *output_names;
  if (!PyArg_ParseTuple(args, "OO!O!", &session_obj, &PyDict_Type, &feeds, &PyList_Type, &output_names))
    return nullptr;
  if (!api.session_run) {
    PyErr_SetString(PyExc_RuntimeError, "_tandem_fastrun: bind() was not called");
    return nullptr;
  }
  void* session = PyLong_AsVoidPtr(session_obj);
  if (PyErr_Occurred()) return nullptr;
  Held held_names;
  std::vector<const char*> out_names(static_cast<size_t>(PyList_GET_SIZE(output_names)));
  for (size_t i = 0; i < out_names.size(); ++i) {
    PyObject* n = held_names.Keep(PyList_GET_ITEM(output_names, static_cast<Py_ssize_t>(i)));
    out_names[i] = PyUnicode_Check(n) ? PyUnicode_AsUTF8(n) : nullptr;
    if (!out_names[i]) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
  }
  std::vector<void*> outs(out_names.size(), nullptr);
  Status status = nullptr;
  {
    Wrapped w;
    if (!WrapFeeds(feeds, w, &status)) {
      if (status) return PyLong_FromVoidPtr(status);
      Py_RETURN_NONE;
    }
    // Never NULL arrays: NULL output names would mean "all outputs" to the C API.
    static const char* const kNone[1] = {nullptr};
    static void* const kNoTensor[1] = {nullptr};
    void* no_output[1] = {nullptr};
    const char* const* in_names = w.names.empty() ? kNone : w.names.data();
    void* const* in_tensors = w.tensors.empty() ? kNoTensor : w.tensors.data();
    const char* const* names = out_names.empty() ? kNone : out_names.data();
    void** out_tensors = outs.empty() ? no_output : outs.data();
    Py_BEGIN_ALLOW_THREADS
    status = api.session_run(session, in_names, in_tensors, w.tensors.size(), names, out_names.size(), out_tensors);
    Py_END_ALLOW_THREADS
  }
  if (status) return PyLong_FromVoidPtr(status);
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(outs.size()));
  if (!list) {
    for (void* t : outs)
      if (t) api.tensor_release(t);
    return nullptr;
  }
  bool raw = false;
  for (size_t i = 0; i < outs.size(); ++i) {
    PyObject* item = outs[i] ? TakeOutput(outs[i]) : nullptr;
    if (!item) {
      PyErr_Clear();
      raw |= outs[i] != nullptr;
      item = outs[i] ? PyLong_FromVoidPtr(outs[i]) : Py_NewRef(Py_None);
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return Py_BuildValue("(NO)", list, raw ? Py_True : Py_False);
}

PyMethodDef kMethods[] = {
    {"bind", Bind, METH_VARARGS, "bind(wrap, release, run, host_view, status_release): C API addresses"},
    {"run", Run, METH_VARARGS, "run(session, feeds, output_names) -> (arrays, raw) | status | None"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_tandem_fastrun", nullptr, -1, kMethods, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__tandem_fastrun() {
  import_array();
  return PyModule_Create(&kModule);
}
