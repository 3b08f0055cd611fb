// FP64 peak probe (`edm devices --peak`, the manifest's measured peak): independent FMA chains per
// work-item, enough of them to cover the FMA latency, values kept bounded (|a| < 1) and written out
// so the compiler can neither fold nor drop the loop. 2 flops per fma() and lane.
// PEAK_WIDTH (set by the host: the device's native FP64 vector width, 1 on GPUs) lanes per chain: a
// CPU runtime runs work-items as a loop and does not vectorise across them when the work-item has a
// loop of its own, so with scalar chains the probe measured one lane of a vector FMA unit (an eighth
// of an AVX-512 core: BENCHMARKS.md, "PoCL: the vector units"). The lanes start apart, so that the
// compiler cannot fold them into one scalar chain.
#ifndef PEAK_WIDTH
#define PEAK_WIDTH 1
#endif
#if PEAK_WIDTH > 1
#define PEAK_CAT_(a, b) a##b
#define PEAK_CAT(a, b) PEAK_CAT_(a, b)
typedef PEAK_CAT(double, PEAK_WIDTH) peak_t;
#define PEAK_VSTORE PEAK_CAT(vstore, PEAK_WIDTH)
#define PEAK_VLOAD PEAK_CAT(vload, PEAK_WIDTH)
#else
typedef double peak_t;
#endif

__kernel void fma_peak(__global double* out, const int iters, const double a, const double b) {
#if PEAK_WIDTH > 1
  double lanes[PEAK_WIDTH];
  for (int l = 0; l < PEAK_WIDTH; ++l) lanes[l] = (double)get_global_id(0) * 1e-9 + 1e-3 * l;
  const peak_t s = PEAK_VLOAD(0, lanes);
#else
  const peak_t s = (double)get_global_id(0) * 1e-9;
#endif
  peak_t x0 = s, x1 = s + 0.1, x2 = s + 0.2, x3 = s + 0.3, x4 = s + 0.4, x5 = s + 0.5, x6 = s + 0.6, x7 = s + 0.7;
  for (int i = 0; i < iters; ++i) {
    x0 = fma(x0, a, b);
    x1 = fma(x1, a, b);
    x2 = fma(x2, a, b);
    x3 = fma(x3, a, b);
    x4 = fma(x4, a, b);
    x5 = fma(x5, a, b);
    x6 = fma(x6, a, b);
    x7 = fma(x7, a, b);
  }
  const peak_t r = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
#if PEAK_WIDTH > 1
  PEAK_VSTORE(r, 0, lanes);
  double sum = 0;
  for (int l = 0; l < PEAK_WIDTH; ++l) sum += lanes[l];
  out[get_global_id(0)] = sum;
#else
  out[get_global_id(0)] = r;
#endif
}
