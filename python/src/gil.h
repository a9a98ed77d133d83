// Releasing the GIL around work that waits, in a way that survives the interpreter's exit.
//
// A thread that takes the GIL back while the interpreter is finalizing (a daemon thread whose read
// ends after the main thread returned) never gets it: CPython ends the thread with pthread_exit,
// which unwinds its stack as an exception that cannot be stopped. Through a frame that may not
// throw (any destructor, py::gil_scoped_release's among them) that unwinding is std::terminate:
// SIGABRT at exit. Unwinding through the binding's frames would be no better: their destructors
// would touch Python objects without the GIL, while the main thread tears the interpreter down.
//
// So the GIL is taken back in one place, which catches that unwinding where it starts and parks the
// thread for good instead (what CPython itself does from 3.14 on): the thread holds nothing, runs
// nothing, and the process exits as if it were not there. Every place that releases the GIL uses
// these two classes, never py::gil_scoped_release or py::gil_scoped_acquire.
#pragma once

#include <Python.h>

namespace mibz2::python {

// The GIL released for this object's life (as py::gil_scoped_release), taken back at its end: the
// destructor returns with the GIL held, or never returns (the interpreter is finalizing).
class GilReleased {
 public:
  GilReleased() : state_(PyEval_SaveThread()) {}
  ~GilReleased();
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  friend class GilRetaken;
  PyThreadState* const state_;  // this thread's, as released
};

// The GIL held again for this object's life by the thread that released it with `released` (a
// callback into Python from C++ code that runs without the GIL, on the same thread), and released
// at its end. The constructor returns with the GIL held, or never returns (finalizing). It takes
// the thread state `released` saved, as CPython's own Py_END_ALLOW_THREADS does: during
// finalization PyGILState_GetThisThreadState() may already say there is none.
class GilRetaken {
 public:
  explicit GilRetaken(const GilReleased& released);
  ~GilRetaken() { PyEval_SaveThread(); }
  GilRetaken(const GilRetaken&) = delete;
  GilRetaken& operator=(const GilRetaken&) = delete;
};

}  // namespace mibz2::python
