// The fft method of the far-field spectra (core/src/field/spectra_fft.cpp, share/docs/outputs.md
// "Direct spectra"): each electron's far-field series R·E_far(t_k), t_k = t0 + k dt (k < nb), from
// the field kernel (the angular screen at infinity), turned into the amplitudes on the requested
// linear grid ω_j = ω0 + j δω (j < nw) by a chirp-z transform (Bluestein): with α = δω dt and
// jk = (j² + k² − (j − k)²)/2,
//   A(ω_j) = dt Σ_k E_k e^{iω_j t_k} = post_j · Σ_k y_k h(j − k),
//   y_k = E_k e^{i(ω0 k dt + α k²/2)} (`chirp`),  h(n) = e^{−iα n²/2},  post_j = dt e^{iω_j t0} e^{iα j²/2},
// the convolution done by clFFT over L ≥ nb + nw − 1 points (forward, times H = DFT of the wrapped h,
// backward). So every requested ω is evaluated exactly as the sum over the samples (no bin
// alignment, no interpolation); only the sampling of E (dt) and the window bound the accuracy.
//
// The series transformed are the two transverse projections t ∈ {0: e1, 1: e2} of R·E_far per
// direction (cl/spectra_series.cl: at infinity R·E_far is exactly transverse, its component along
// n̂ is rounding), read from X = [k][2 np] (X[k·2np + t·np + pos]).
// Layout of the work buffer Y (complex, interleaved): Y[(g·Q + q)·L + k], Q = 2 np, the series
// q = t·np + pos (projection t, device position pos of the field cube) of electron slot g of the
// group, point k < L: every transform is contiguous (stride 1, distance L), the layout clFFT's
// batched transforms read fastest. X has position fastest, so the premultiply transposes through
// a tile in local memory (both its reads and its writes coalesced).

// CZT_TILE, the premultiply's work-group edge, comes from the host (core/src/field/spectra_fft.cpp
// builds the program with it and launches CZT_TILE × CZT_TILE work-groups).
#ifndef CZT_TILE
#error "CZT_TILE: the host defines it"
#endif

// Electron slot g: y from the projections X (k < nb; every row written for this electron by
// series_project, which also zeroed the cube) or zero padding (nb ≤ k < L). Work-groups of
// CZT_TILE × CZT_TILE: dimension 0 over positions (reads) / points (writes), 1 over points /
// positions, 2 the projection t.
__kernel void czt_premultiply(__global const double* restrict X, const int np, const int nb, const int L, const int g,
                              __global const double2* restrict chirp, __global double2* restrict Y) {
  __local double tile[CZT_TILE][CZT_TILE + 1];
  const int lx = (int)get_local_id(0), ly = (int)get_local_id(1), c = (int)get_global_id(2);
  const int pos0 = (int)get_group_id(0) * CZT_TILE, k0 = (int)get_group_id(1) * CZT_TILE;
  {
    const int pos = pos0 + lx, k = k0 + ly;
    tile[ly][lx] = pos < np && k < nb ? X[(ulong)k * (ulong)(2 * np) + (ulong)(c * np + pos)] : 0.0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int k = k0 + lx, pos = pos0 + ly;
  if (pos < np && k < L) {
    const double2 y = k < nb ? tile[lx][ly] * chirp[k] : (double2)(0.0, 0.0);
    Y[((ulong)g * (ulong)(2 * np) + (ulong)(c * np + pos)) * (ulong)L + (ulong)k] = y;
  }
}

// Y ← Y · H (the DFT of the wrapped chirp h, from the host), per point k of every series.
__kernel void czt_multiply(__global double2* restrict Y, const int L, const int GQ, __global const double2* restrict H) {
  const int k = (int)get_global_id(0), b = (int)get_global_id(1);
  if (k >= L || b >= GQ) return;
  const ulong i = (ulong)b * (ulong)L + (ulong)k;
  const double2 a = Y[i], h = H[k];
  Y[i] = (double2)(a.x * h.x - a.y * h.y, a.x * h.y + a.y * h.x);
}

// The sums: one work-item per (frequency j, direction d) owns its bins and adds the group's
// `count` electrons in electron order (slot 0 first), each amplitude complete before it is added —
// the direct method's rule (cl/spectra.cl), so the sums do not depend on the batching. The
// Cartesian amplitude is rebuilt as A_c = e1_c A_1 + e2_c A_2 (basis[6 pos ...], from the host) and
// |A|² as |A_1|² + |A_2|² (the basis is orthonormal).
// Layouts: coh[((d·nw + j)·3 + c)·2 + {re, im}], inc[d·nw + j] (core/include/edm/spectra.hpp).
__kernel void czt_reduce(__global const double2* restrict Y, const int np, const int nd, const int nw, const int L,
                         const int count, __global const int* restrict position_of,
                         __global const double* restrict basis, __global const double2* restrict post,
                         __global const double* restrict weights, __global double* restrict coh,
                         __global double* restrict inc) {
  const int j = (int)get_global_id(0), d = (int)get_global_id(1);
  if (j >= nw || d >= nd) return;
  const int Q = 2 * np, pos = position_of[d];
  double e[6];
  for (int i = 0; i < 6; ++i) e[i] = basis[6 * (ulong)pos + (ulong)i];
  const double2 p = post[j];
  const ulong bin = (ulong)d * (ulong)nw + (ulong)j;
  double cr[3], ci[3];
  for (int c = 0; c < 3; ++c) {
    cr[c] = coh[(bin * 3 + c) * 2];
    ci[c] = coh[(bin * 3 + c) * 2 + 1];
  }
  double s = inc[bin];
  for (int g = 0; g < count; ++g) {
    const double w = weights[g];
    double re[2], im[2];
    for (int t = 0; t < 2; ++t) {
      const double2 z = Y[((ulong)g * (ulong)Q + (ulong)(t * np + pos)) * (ulong)L + (ulong)j];
      re[t] = z.x * p.x - z.y * p.y;
      im[t] = z.x * p.y + z.y * p.x;
    }
    for (int c = 0; c < 3; ++c) {
      cr[c] += w * (e[c] * re[0] + e[3 + c] * re[1]);
      ci[c] += w * (e[c] * im[0] + e[3 + c] * im[1]);
    }
    s += w * ((re[0] * re[0] + im[0] * im[0]) + (re[1] * re[1] + im[1] * im[1]));
  }
  for (int c = 0; c < 3; ++c) {
    coh[(bin * 3 + c) * 2] = cr[c];
    coh[(bin * 3 + c) * 2 + 1] = ci[c];
  }
  inc[bin] = s;
}
