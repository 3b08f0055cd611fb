// What the fft and dft methods of the far-field spectra share on the device
// (core/src/field/spectra_series.hpp, share/docs/outputs.md "Direct spectra"): each electron's
// far-field series R·E_far(t_k) projected on a transverse basis (e1, e2) per direction. At infinity
// R·E_far is exactly transverse (n̂·R·E_far = 0 identically in lw_dir_fields, cl/lw_direction.cl,
// LW_ANGULAR == 2), so its component along n̂ is rounding and the two projections carry the whole
// series: both methods transform 2 series per direction instead of 3.
//
// Layouts: the field cube E is [c][k][pos] (c < 3 Cartesian components, k < nb samples, pos < np
// device positions; cl/lienard_wiechert.cl); basis[6 pos + i] = e1_i, basis[6 pos + 3 + i] = e2_i
// (from the host, in double); X is [k][2 np]: X[k·2np + pos] = e1·E, X[k·2np + np + pos] = e2·E.

// Rows [k_lo, k_lo + n) of the cube projected into the same rows of X, and zeroed for the next
// electron (the field kernel writes only the samples an electron covers, so the cube must start
// each electron at zero). Dimension 0 over positions: every read and write is coalesced.
__kernel void series_project(__global double* restrict E, const int np, const int nb, const int k_lo, const int n,
                             __global const double* restrict basis, __global double* restrict X) {
  const int pos = (int)get_global_id(0), r = (int)get_global_id(1);
  if (pos >= np || r >= n) return;
  const ulong k = (ulong)(k_lo + r), plane = (ulong)nb * (ulong)np;
  const ulong i = k * (ulong)np + (ulong)pos;
  const double ex = E[i], ey = E[i + plane], ez = E[i + 2 * plane];
  E[i] = 0.0;
  E[i + plane] = 0.0;
  E[i + 2 * plane] = 0.0;
  __global const double* b = basis + 6 * (ulong)pos;
  const ulong row = k * (ulong)(2 * np);
  X[row + (ulong)pos] = (b[0] * ex + b[1] * ey) + b[2] * ez;
  X[row + (ulong)np + (ulong)pos] = (b[3] * ex + b[4] * ey) + b[5] * ez;
}
