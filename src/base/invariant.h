// MIBZ2_INVARIANT(cond): a state the code believes cannot happen. Where invariants are checked
// (every build but Release: the debug and sanitizer builds of scripts/test), a broken one prints
// where and aborts, so it is found in tests instead of being silently recovered from; in Release
// it compiles to nothing and the code after it recovers as well as it can.
#pragma once

#if defined(MIBZ2_CHECK_INVARIANTS)
#include <cstdio>
#include <cstdlib>

#define MIBZ2_INVARIANT(cond)                                                                   \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond);        \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)
#else
#define MIBZ2_INVARIANT(cond) \
  do {                        \
  } while (0)
#endif
