// The dft method of the far-field spectra (core/src/field/spectra_dft.cpp, share/docs/outputs.md
// "Direct spectra"). Each electron's series covers the samples [k_lo, k_lo + n); about its centre
// sample k_c = k_lo + (n − 1)/2 the Fourier sum splits into an even and an odd part,
//   Σ_k dt e^{iω t_k} x_k = e^{iω t_c} (Σ_{m=0..h} dt cos(ω m dt) S_m + i Σ_{m=1..h} dt sin(ω m dt) D_m),
//   S_0 = x_c, S_m = x_{c+m} + x_{c−m}, D_m = x_{c+m} − x_{c−m}   (m ≥ 1, h = n − 1 − (n − 1)/2),
// (cos is even, sin odd; a sample outside [k_lo, k_lo + n) is zero), so the two real products by
// CLBlast's DGEMM have half the inner dimension of one product over the n samples: half the FLOP.
//
// Each sample is projected on its direction's transverse basis (e1, e2) first: at infinity R·E_far
// is exactly transverse (cl/spectra_series.cl, lw_dir_fields in cl/lw_direction.cl), its component
// along n̂ is rounding, and the two projections carry the whole series.
//
// Layouts: the field cube E is [c][k][pos] (c < 3 Cartesian components, k < nb samples, pos < np
// device positions; cl/lienard_wiechert.cl); basis[6 pos + i] = e1_i, basis[6 pos + 3 + i] = e2_i;
// the folded projections X are [row][2 np] (column t·np + pos for projection t ∈ {0: e1, 1: e2}),
// S_m in row m (m ≤ h) and D_m in row rd + m − 1 (1 ≤ m ≤ h, rd = nb/2 + 1: the rows of S never
// reach it, and the last row of D is at most nb).

// The folded projections of the electron's samples, and those cube samples zeroed for the next
// electron (the field kernel writes only the samples an electron covers, so the cube must start
// each electron at zero): work-item (pos, m) reads samples k_c ± m, so every sample of
// [k_lo, k_lo + n) is read and zeroed by exactly one work-item. Dimension 0 over positions: every
// read and write is coalesced.
inline void dft_project(__global double* restrict E, const ulong i, const ulong plane,
                        __global const double* restrict b, double* p) {
  const double ex = E[i], ey = E[i + plane], ez = E[i + 2 * plane];
  E[i] = 0.0;
  E[i + plane] = 0.0;
  E[i + 2 * plane] = 0.0;
  p[0] = (b[0] * ex + b[1] * ey) + b[2] * ez;
  p[1] = (b[3] * ex + b[4] * ey) + b[5] * ez;
}

__kernel void dft_fold(__global double* restrict E, const int np, const int nb, const int k_lo, const int n,
                       const int k_c, const int h, const int rd, __global const double* restrict basis,
                       __global double* restrict X) {
  const int pos = (int)get_global_id(0), m = (int)get_global_id(1);
  if (pos >= np || m > h) return;
  const ulong plane = (ulong)nb * (ulong)np, cols = 2 * (ulong)np;
  __global const double* b = basis + 6 * (ulong)pos;
  double up[2] = {0.0, 0.0}, down[2] = {0.0, 0.0};
  const int kp = k_c + m, km = k_c - m;
  if (kp < k_lo + n) dft_project(E, (ulong)kp * (ulong)np + (ulong)pos, plane, b, up);
  if (m == 0) {
    X[(ulong)pos] = up[0];
    X[(ulong)np + (ulong)pos] = up[1];
    return;
  }
  if (km >= k_lo) dft_project(E, (ulong)km * (ulong)np + (ulong)pos, plane, b, down);
  const ulong s = (ulong)m * cols + (ulong)pos, d = (ulong)(rd + m - 1) * cols + (ulong)pos;
  X[s] = up[0] + down[0];
  X[s + (ulong)np] = up[1] + down[1];
  X[d] = up[0] - down[0];
  X[d + (ulong)np] = up[1] - down[1];
}

// CLBlast's DGEMMs have written, for electron slot g of a group and projection t, the even and odd
// parts about the electron's centre,
//   C[(g·2nw + j)·2np + t·np + pos]      = Σ_m dt cos(ω_j m dt) S_m   (R_t),
//   C[(g·2nw + nw + j)·2np + t·np + pos] = Σ_m dt sin(ω_j m dt) D_m   (I_t),
// and phase[(g·nw + j)·2 + {0, 1}] = (cos, sin)(ω_j t_c) of the slot's centre, from the host in
// double; the amplitude is A_t = e^{iω_j t_c} (R_t + i I_t), and |A_t|² = R_t² + I_t².
//
// The sums: one work-item per (device position, frequency j) owns its bins and adds the group's
// `count` electrons in electron order (slot 0 first), each amplitude complete before it is added —
// the direct method's rule (cl/spectra.cl), so the sums do not depend on the batching. The
// Cartesian amplitude is rebuilt as A_c = e1_c A_1 + e2_c A_2 and |A|² as |A_1|² + |A_2|² (the basis
// is orthonormal). Dimension 0 runs over positions, so that the reads of C (the larger traffic) are
// coalesced.
// Layouts: coh[((d·nw + j)·3 + c)·2 + {re, im}], inc[d·nw + j] (core/include/edm/spectra.hpp).
__kernel void dft_reduce(__global const double* restrict C, const int np, const int nw, const int count,
                         __global const int* restrict direction_of, __global const double* restrict basis,
                         __global const double* restrict weights, __global const double* restrict phase,
                         __global double* restrict coh, __global double* restrict inc) {
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
    const double pc = phase[((ulong)g * (ulong)nw + (ulong)j) * 2], ps = phase[((ulong)g * (ulong)nw + (ulong)j) * 2 + 1];
    const ulong i = (ulong)g * slot + (ulong)j * cols + (ulong)pos;
    const ulong im = (ulong)nw * cols;
    const double R1 = C[i], R2 = C[i + (ulong)np], I1 = C[i + im], I2 = C[i + im + (ulong)np];
    const double r1 = pc * R1 - ps * I1, i1 = ps * R1 + pc * I1;
    const double r2 = pc * R2 - ps * I2, i2 = ps * R2 + pc * I2;
    for (int c = 0; c < 3; ++c) {
      cr[c] += w * (e[c] * r1 + e[3 + c] * r2);
      ci[c] += w * (e[c] * i1 + e[3 + c] * i2);
    }
    s += w * ((R1 * R1 + I1 * I1) + (R2 * R2 + I2 * I2));
  }
  for (int c = 0; c < 3; ++c) {
    coh[(bin * 3 + c) * 2] = cr[c];
    coh[(bin * 3 + c) * 2 + 1] = ci[c];
  }
  inc[bin] = s;
}
