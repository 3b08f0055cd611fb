// The dft method of the far-field spectra (core/src/field/spectra_dft.cpp, share/docs/outputs.md
// "Direct spectra"): each electron's series has been projected on its direction's transverse basis
// (e1, e2) (cl/spectra_series.cl: at infinity R·E_far is exactly transverse, its component along n̂
// is rounding), and CLBlast's DGEMM has written, for electron slot g of a group and projection
// t ∈ {0: e1, 1: e2}, the real and imaginary parts of every amplitude,
//   C[(g·2nw + j)·2np + t·np + pos]      = Σ_k dt cos(ω_j t_k) (e_t·E)[k][pos]   (Re A_t),
//   C[(g·2nw + nw + j)·2np + t·np + pos] = Σ_k dt sin(ω_j t_k) (e_t·E)[k][pos]   (Im A_t),
// over the samples the electron covers; pos is the field cube's device position, direction_of[pos]
// its direction d, basis[6 pos ...] its (e1, e2).

// The sums: one work-item per (device position, frequency j) owns its bins and adds the group's
// `count` electrons in electron order (slot 0 first), each amplitude complete before it is added —
// the direct method's rule (cl/spectra.cl), so the sums do not depend on the batching. The
// Cartesian amplitude is rebuilt as A_c = e1_c A_1 + e2_c A_2 and |A|² as |A_1|² + |A_2|² (the basis
// is orthonormal). Dimension 0 runs over positions, so that the reads of C (the larger traffic) are
// coalesced.
// Layouts: coh[((d·nw + j)·3 + c)·2 + {re, im}], inc[d·nw + j] (core/include/edm/spectra.hpp).
__kernel void dft_reduce(__global const double* restrict C, const int np, const int nw, const int count,
                         __global const int* restrict direction_of, __global const double* restrict basis,
                         __global const double* restrict weights, __global double* restrict coh,
                         __global double* restrict inc) {
  const int pos = (int)get_global_id(0), j = (int)get_global_id(1);
  if (pos >= np || j >= nw) return;
  const ulong bin = (ulong)direction_of[pos] * (ulong)nw + (ulong)j;
  const ulong cols = 2 * (ulong)np, slot = 2 * (ulong)nw * cols;
  double e[6];
  for (int i = 0; i < 6; ++i) e[i] = basis[6 * (ulong)pos + (ulong)i];
  double cr[3], ci[3];
  for (int c = 0; c < 3; ++c) {
    cr[c] = coh[(bin * 3 + c) * 2];
    ci[c] = coh[(bin * 3 + c) * 2 + 1];
  }
  double s = inc[bin];
  for (int g = 0; g < count; ++g) {
    const double w = weights[g];
    const ulong i = (ulong)g * slot + (ulong)j * cols + (ulong)pos;
    const ulong im = (ulong)nw * cols;
    const double r1 = C[i], r2 = C[i + (ulong)np], i1 = C[i + im], i2 = C[i + im + (ulong)np];
    for (int c = 0; c < 3; ++c) {
      cr[c] += w * (e[c] * r1 + e[3 + c] * r2);
      ci[c] += w * (e[c] * i1 + e[3 + c] * i2);
    }
    s += w * ((r1 * r1 + i1 * i1) + (r2 * r2 + i2 * i2));
  }
  for (int c = 0; c < 3; ++c) {
    coh[(bin * 3 + c) * 2] = cr[c];
    coh[(bin * 3 + c) * 2 + 1] = ci[c];
  }
  inc[bin] = s;
}
