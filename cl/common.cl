// Helpers shared by the edm kernels (FP64 everywhere): the screen geometry and the floating-point
// pragmas (spline evaluation lives in lw_slot.cl, shared with the host FLOP count). OpenCL C 1.2
// compatible (no generic address space).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// Deterministic arithmetic: no implicit contraction into FMA. Contraction is compiler-dependent and
// could make two code paths that must be bit-identical (coefficient reuse on/off) differ in the last
// bit; the FMAs we want are written out with fma().
#pragma OPENCL FP_CONTRACT OFF

// Screen pixel coordinate with the same operation order as Screen::pixel_x (host and device then
// agree on the pixel position bit for bit).
inline double edm_pixel(const int i, const int n, const double hw) {  // (`half` is a type in OpenCL C)
  return n == 1 ? 0.0 : -hw + 2.0 * hw * (double)i / (double)(n - 1);
}
