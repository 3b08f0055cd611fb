// Helpers shared by the edm kernels (FP64 everywhere): cubic-spline evaluation in the trajectory
// layout of core/include/edm/trajectory.hpp (48 doubles per interval, [component][power]) and the
// screen geometry. OpenCL C 1.2 compatible (no generic address space: one helper per address space).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// Deterministic arithmetic: no implicit contraction into FMA. Contraction is compiler-dependent and
// could make two code paths that must be bit-identical (coefficient reuse on/off) differ in the last
// bit; the FMAs we want are written out with fma().
#pragma OPENCL FP_CONTRACT OFF

#define EDM_NCOMP 12
#define EDM_NCOEF 48

// Interval of τ on uniform knots: floor, clamped to [0, n−1] (no search). Outside the span the end
// interval's cubic is extrapolated; callers keep τ inside the span.
inline int edm_interval(const double tau, const double tau0, const double dtau, const int n) {
  const double f = floor((tau - tau0) / dtau);
  return f < 0.0 ? 0 : (f >= (double)n ? n - 1 : (int)f);
}

// value = c0 + s(c1 + s(c2 + s c3)) with explicit FMAs (same rounding on every vendor).
inline double edm_horner_g(__global const double* c, const double s) {
  return fma(s, fma(s, fma(s, c[3], c[2]), c[1]), c[0]);
}
inline double edm_horner_p(const double* c, const double s) {
  return fma(s, fma(s, fma(s, c[3], c[2]), c[1]), c[0]);
}

// The cubic of t − s_z z (components 0 and 3; s_z = ±1 so the coefficient combination is exact).
inline double edm_horner_lf_g(__global const double* c, const double sz, const double s) {
  return fma(s, fma(s, fma(s, c[3] - sz * c[15], c[2] - sz * c[14]), c[1] - sz * c[13]), c[0] - sz * c[12]);
}
inline double edm_horner_lf_p(const double* c, const double sz, const double s) {
  return fma(s, fma(s, fma(s, c[3] - sz * c[15], c[2] - sz * c[14]), c[1] - sz * c[13]), c[0] - sz * c[12]);
}

// d/ds of the cubic: c1 + s(2 c2 + 3 s c3).
inline double edm_dhorner_g(__global const double* c, const double s) {
  return fma(s, fma(s, 3.0 * c[3], 2.0 * c[2]), c[1]);
}
inline double edm_dhorner_p(const double* c, const double s) {
  return fma(s, fma(s, 3.0 * c[3], 2.0 * c[2]), c[1]);
}

// Screen pixel coordinate with the same operation order as Screen::pixel_x (host and device then
// agree on the pixel position bit for bit).
inline double edm_pixel(const int i, const int n, const double hw) {  // (`half` is a type in OpenCL C)
  return n == 1 ? 0.0 : -hw + 2.0 * hw * (double)i / (double)(n - 1);
}
