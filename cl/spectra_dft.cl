// The dft method of the far-field spectra (core/src/field/spectra_dft.cpp, share/docs/outputs.md
// "Direct spectra"): CLBlast's DGEMM has written, for electron slot g of a group and component c,
// the real and imaginary parts of every amplitude,
//   C[((g·3 + c)·2nw + j)·np + pos]      = Σ_k dt cos(ω_j t_k) E_c[k][pos]   (Re A),
//   C[((g·3 + c)·2nw + nw + j)·np + pos] = Σ_k dt sin(ω_j t_k) E_c[k][pos]   (Im A),
// over the samples the electron covers; pos is the field cube's device position, direction_of[pos]
// its direction d.

// The sums: one work-item per (device position, frequency j) owns its bins and adds the group's
// `count` electrons in electron order (slot 0 first), each amplitude complete before it is added —
// the direct method's rule (cl/spectra.cl), so the sums do not depend on the batching. Dimension 0
// runs over positions, so that the reads of C (the larger traffic) are coalesced.
// Layouts: coh[((d·nw + j)·3 + c)·2 + {re, im}], inc[d·nw + j] (core/include/edm/spectra.hpp).
__kernel void dft_reduce(__global const double* restrict C, const int np, const int nw, const int count,
                         __global const int* restrict direction_of, __global const double* restrict weights,
                         __global double* restrict coh, __global double* restrict inc) {
  const int pos = (int)get_global_id(0), j = (int)get_global_id(1);
  if (pos >= np || j >= nw) return;
  const ulong bin = (ulong)direction_of[pos] * (ulong)nw + (ulong)j;
  const ulong plane = (ulong)(2 * nw) * (ulong)np;  // one component of one slot
  double cr[3], ci[3];
  for (int c = 0; c < 3; ++c) {
    cr[c] = coh[(bin * 3 + c) * 2];
    ci[c] = coh[(bin * 3 + c) * 2 + 1];
  }
  double s = inc[bin];
  for (int g = 0; g < count; ++g) {
    const double w = weights[g];
    double mag2 = 0.0;
    for (int c = 0; c < 3; ++c) {
      const ulong i = ((ulong)g * 3 + (ulong)c) * plane + (ulong)j * (ulong)np + (ulong)pos;
      const double re = C[i], im = C[i + (ulong)nw * (ulong)np];
      cr[c] += w * re;
      ci[c] += w * im;
      mag2 += re * re + im * im;
    }
    s += w * mag2;
  }
  for (int c = 0; c < 3; ++c) {
    coh[(bin * 3 + c) * 2] = cr[c];
    coh[(bin * 3 + c) * 2 + 1] = ci[c];
  }
  inc[bin] = s;
}
