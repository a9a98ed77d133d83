#include "gil.h"

#include <unistd.h>

#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif

namespace mibz2::python {
namespace {

// PyEval_RestoreThread, or the thread parked for good when the interpreter is finalizing (gil.h).
// The handler stops pthread_exit's unwinding in this frame, before it reaches any other: the
// frames between here and pthread_exit are CPython's, which have nothing to clean up.
void take_gil_back(PyThreadState* state) {
#if defined(__GLIBCXX__)
  try {
    PyEval_RestoreThread(state);
  } catch (abi::__forced_unwind&) {
    // Leaving this handler would end the unwinding (std::terminate) or resume it (the frames
    // above): neither. The process ends around this thread.
    for (;;) pause();
  }
#else
  PyEval_RestoreThread(state);
#endif
}

}  // namespace

GilReleased::~GilReleased() { take_gil_back(state_); }

GilRetaken::GilRetaken(const GilReleased& released) { take_gil_back(released.state_); }

}  // namespace mibz2::python
