// FP64 peak probe (`edm devices --peak`, the manifest's measured peak): independent FMA chains per
// work-item, enough of them to cover the FMA latency, values kept bounded (|a| < 1) and written out
// so the compiler can neither fold nor drop the loop. 2 flops per fma().
__kernel void fma_peak(__global double* out, const int iters, const double a, const double b) {
  const double s = (double)get_global_id(0) * 1e-9;
  double x0 = s, x1 = s + 0.1, x2 = s + 0.2, x3 = s + 0.3, x4 = s + 0.4, x5 = s + 0.5, x6 = s + 0.6,
         x7 = s + 0.7;
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
  out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
