// Host (C++) build of cl/lw_slot.cl: the OpenCL-only load macros for plain pointers. Include it
// inside a namespace after `typedef <number type> lw_real;` (and an rsqrt for that type):
// core/src/flop_count.cpp counts the kernel's FLOPs with it, tests/test_newton_step runs the
// kernel's retarded-time step on the host.
#define LW_HOST 1
#define LW_GLOBAL
#define LW_LOAD2(src, i, c)        \
  {                                \
    (c)[(i)] = (src)[(i)];         \
    (c)[(i) + 1] = (src)[(i) + 1]; \
  }
#define LW_LOAD4(src, i, c0, c1, c2, c3) \
  {                                      \
    c0 = (src)[(i)];                     \
    c1 = (src)[(i) + 1];                 \
    c2 = (src)[(i) + 2];                 \
    c3 = (src)[(i) + 3];                 \
  }
#include "lw_slot.cl"
