# ctest-label: physics
"""J_z per photon of thomson_lg's fundamental, against an analysis of field.h5 written here.

share/campaigns/thomson_lg.toml (LG p = 2, m = −2, circular_minus) gives the fundamental J_z = +3
per photon about +z (share/docs/twisted_light.md), and its ring fits find ℓ = 2 and 4. The flux of
angular momentum through the screen per photon through it (/observables/harmonic/j_per_photon) is
far lower (1.6 ħ on this reduced screen, 2.37 on the campaign's): the screen cuts the vortex's ring,
and the spin at the cut edge is missing from the flux. edm must say which number is the photons' J:

1. j_per_photon is the stress-tensor book: recomputed here with numpy's FFT from E and B, to 1e-9.
2. photon_j is the photons' J: the canonical (orbital + spin) density of the complex amplitudes,
   Σ_c Im(A_c* ∂_φ A_c) + 2 Im(A_x* A_y), photon-weighted over every pixel and bin of the band,
   computed here from field.h5 with numpy's FFT and gradient: to 1e-9, and +3 within 0.05.
3. The two differ by the edge term of a square screen, (a/2)∮(I₊ − I₋)dl / ∫I dA (a the distance of
   the cells' outer edge from the axis), computed here: book ≈ photons' J − edge, within 0.02 ħ.
4. screen_cut is 1, and `edm spectrum` prints the photons' J as J_z per photon and the book as
   "through the screen … the screen cuts the light".

usage: python3 tests/python/test_jz_photons.py EDM_BINARY
"""
import os
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edm_testrun  # noqa: E402

EPS0, C = 8.8541878128e-12, 299792458.0
MU0 = 1 / (EPS0 * C * C)
J_LASER = 3  # −(m + σ_edm) for m = −2, circular_minus


def band_analysis(field, lo, hi):
    """(stress-tensor J, canonical J, edge term) of the band [lo, hi] (rad/s), in ħ per photon."""
    t, x, y = field["/axes/t"][...], field["/axes/x"][...], field["/axes/y"][...]
    z0 = float(field.attrs["screen_z"])
    n, dt = t.size, t[1] - t[0]
    w = 2 * np.pi * np.fft.rfftfreq(n, dt)
    band = np.nonzero((w >= lo * (1 - 1e-12)) & (w <= hi * (1 + 1e-12)) & (w > 0))[0]
    g = np.ones(w.size)
    g[0] = 0.5
    if n % 2 == 0:
        g[-1] = 0.5
    E = [np.fft.rfft(field["/E/" + k][...], axis=2) for k in "xyz"]
    B = [np.fft.rfft(field["/B/" + k][...], axis=2) for k in "xyz"]
    X, Y = np.meshgrid(x, y)
    px, py = x[1] - x[0], y[1] - y[0]
    cross = lambda a, b: (dt * dt / np.pi) * np.real(a * np.conj(b))  # noqa: E731
    flux = (cross(E[0], B[1]) - cross(E[1], B[0])) / MU0
    mz = Y[..., None] * (EPS0 * cross(E[0], E[2]) + cross(B[0], B[2]) / MU0) - X[..., None] * (
        EPS0 * cross(E[1], E[2]) + cross(B[1], B[2]) / MU0)
    dW, dL = flux.sum((0, 1)), mz.sum((0, 1))
    photons = np.sum(g[band] * dW[band] / w[band])
    book = np.sum(g[band] * dL[band]) / photons
    R = np.sqrt(X ** 2 + Y ** 2 + z0 ** 2)
    cos = abs(z0) / R
    a = x[-1] + px / 2
    canon = edge = den = 0.0
    for k in band:
        # e^{−iωt} amplitudes (numpy's forward transform is e^{−iωt}-conjugate), the spherical phase
        # e^{iωR/c} taken out so that the differences see only the vortex.
        A = [np.conj(Ec[:, :, k]) * np.exp(-1j * w[k] * R / C) for Ec in E]
        dens = 2 * np.imag(np.conj(A[0]) * A[1])
        for Ac in A:
            dy, dx = np.gradient(Ac, y, x)
            dens = dens + np.imag(np.conj(Ac) * (X * dy - Y * dx))
        inten = sum(np.abs(Ac) ** 2 for Ac in A) * cos
        d = (np.abs(A[0] - 1j * A[1]) ** 2 - np.abs(A[0] + 1j * A[1]) ** 2) / 2 * cos
        ring = (d[0, :].sum() + d[-1, :].sum()) * px + (d[:, 0].sum() + d[:, -1].sum()) * py
        wt = g[k] / w[k]
        canon += wt * np.sum(dens * cos)
        edge += wt * a / 2 * ring / (px * py)
        den += wt * np.sum(inten)
    return book, canon / den, edge / den


class JzPhotons(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary = edm_testrun.edm_binary()
        cls.ws = edm_testrun.Workspace("jz")
        src = os.environ.get("EDM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
        cls.run_dir = os.path.join(cls.ws.dir, "lg")
        edm_testrun.run_edm(cls.binary, "run", os.path.join(src, "share/campaigns/thomson_lg.toml"), "--quiet",
                            "--output", cls.run_dir, "--set", "electrons.count=32", "--set", "screen.nx=21",
                            "--set", "screen.ny=21", "--set", "screen.half_width=1.5e-4",
                            "--set", "screen.samples=1024")
        cls.printed = edm_testrun.run_edm(cls.binary, "spectrum", cls.run_dir, "--of", "laser", "--harmonics", "1",
                                          "--ring-radii", "1e-4,1.2e-4").stdout

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def test_book_photons_and_edge(self):
        with h5py.File(os.path.join(self.run_dir, "field.h5"), "r") as f, \
                h5py.File(os.path.join(self.run_dir, "spectrum.h5"), "r") as s:
            wl = float(s["/harmonic_field/omega"][0])  # n ω_b of harmonic 1 = ω_laser
            book, canon, edge = band_analysis(f, 0.5 * wl, 1.5 * wl)
            h = s["/observables/harmonic"]
            edm_book, edm_map = float(h["j_per_photon"][0]), float(h["photon_j"][0])
            orb, spin = float(h["photon_j_orbital"][0]), float(h["photon_j_spin"][0])
            cut = int(h["screen_cut"][0])
        print(f"book {edm_book:.4f} (here {book:.4f}); photons' J {edm_map:.4f} = {orb:.4f} + {spin:.4f} "
              f"(here {canon:.4f}); edge term {edge:.4f}: photons' J − edge {canon - edge:.4f}")
        self.assertLess(abs(edm_book - book), 1e-9 * abs(book))
        self.assertLess(abs(edm_map - canon), 1e-9 * abs(canon))
        self.assertLess(abs(edm_map - J_LASER), 0.05)
        self.assertAlmostEqual(orb + spin, edm_map, delta=1e-12)
        self.assertLess(abs(book - (canon - edge)), 0.02)
        self.assertGreater(canon - book, 1.0)  # the cut is no rounding: more than 1 ħ of 3 is missing
        self.assertEqual(cut, 1)
        self.assertIn(f"J_z per photon {edm_map:.4g} ħ", self.printed)
        self.assertIn(f"through the screen {edm_book:.4g} ħ per photon: the screen cuts the light", self.printed)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
