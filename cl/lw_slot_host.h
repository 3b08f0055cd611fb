// Host (C++) build of cl/lw_slot.cl: the OpenCL-only load macros for plain pointers. Include it
// inside a namespace after `typedef <number type> lw_real;` (and an rsqrt for that type; <cmath>):
// core/src/flop_count.cpp counts the kernel's FLOPs with it, tests/test_newton_step runs the
// kernel's retarded-time step on the host.
#define LW_HOST 1
#define LW_GLOBAL
#define LW_LOAD2(src, i, c)        \
  {                                \
    (c)[(i)] = (src)[(i)];         \
    (c)[(i) + 1] = (src)[(i) + 1]; \
  }
// The seeds of lw_rcp / lw_rsqrt_nr (fast = 1); the host rounds them to float like a device.
inline float half_recip(float x) { return 1.0f / x; }
inline float half_rsqrt(float x) { return 1.0f / std::sqrt(x); }
#include "lw_slot.cl"
