// Running out of file descriptors. The daemon holds one for every plain file open through the mount
// and needs more for every listing, lookup and index build; under a low RLIMIT_NOFILE (soft 1024 is
// the usual default, 64 in some containers) requests fail with EMFILE. Two things help the
// operator: the soft limit raised to the hard one at start (raise_open_file_limit), and the first
// shortage said once, with the limit and what to do (the io layer does not log: the program gives
// a hook, called once, at the first EMFILE or ENFILE any opener reports through note_open_errno).
#pragma once

#include <sys/resource.h>

namespace mibz2::io {

struct OpenFileLimit {
  rlim_t soft_before = 0;  // the soft limit the process started with
  rlim_t soft = 0;         // the soft limit now
  rlim_t hard = 0;
  int error = 0;           // errno of getrlimit/setrlimit, or 0
};

// Raises the soft RLIMIT_NOFILE to the hard limit (what systemd recommends for services that, like
// this one, use no select(2)) and returns both limits.
OpenFileLimit raise_open_file_limit();

// The soft limit now (RLIM_INFINITY if unknown).
rlim_t open_file_limit();

// Every opener of the io layer (and any other that wants the shortage reported) calls this with the
// errno of an open (or mkstemp, opendir, ...) that failed: at the first EMFILE or ENFILE after the
// hook is set, the hook is called, once, with that errno. Returns `err`, so that it can wrap the
// errno where it is read.
int note_open_errno(int err);

// The hook the first shortage calls, on the thread that met it.
using DescriptorShortageHook = void (*)(int err);
void on_descriptor_shortage(DescriptorShortageHook hook);

}  // namespace mibz2::io
