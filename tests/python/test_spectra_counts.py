# ctest-label: physics
"""The direct spectra's counts and weights, against a second method (issue 30, "/spectra physics
cross-check of counts"): an ensemble of three weighted electrons (a CSV list) and each electron alone
with weight 1, on the far angular screen. The ensemble's /direct must say 3 electrons and a weight
sum of 4 (the CSV's 1.5 + 0.5 + 2); its coherent amplitude must be Σ wᵢ Aᵢ of the lone electrons'
amplitudes, its incoherent density and photon count Σ wᵢ of theirs (each electron's photons counted
once per real electron it stands for), and its coherent density the lone electrons' scale times
|Σ wᵢ Aᵢ|². A spectrum that counted an electron twice, dropped one, or applied a weight once too
often or not at all fails here by a factor, far outside the rounding of sums taken in another order.

usage: python3 tests/python/test_spectra_counts.py EDM_BINARY
"""
import math
import os
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edm_testrun  # noqa: E402

UZ = math.sqrt(8.0)  # γ = 3 along +z, as the sunflower cell's electrons
ELECTRONS = [  # x, y (m) at t0 = 0 in the plane z = 0, weight
    (0.0, 0.0, 1.5),
    (2e-6, 0.0, 0.5),
    (-1e-6, 1.5e-6, 2.0),
]
CAMPAIGN = """
[run]
scenario = "inverse_thomson"
mode = "total"
[laser]
profile = "gaussian"
a0 = 0.3
duration = 10.7e-15
waist = 10e-6
[electrons]
distribution = "list"
file = "{csv}"
[screen]
type = "angular"
distance = "infinity"
nx = 3
ny = 3
theta_x_min = -0.05
theta_x_max = 0.05
theta_y_min = -0.05
theta_y_max = 0.05
samples = 256
samples_per_period = 128
[spectra]
enabled = true
method = "direct"
omega_min = 20
omega_max = 45
count = 6
[accumulator]
devices = "0"
"""
RTOL = 1e-11  # sums of three terms in another order: rounding only


def complex_of(d):
    a = d[()]
    return a["r"] + 1j * a["i"] if a.dtype.names else a


class SpectraCounts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.edm = edm_testrun.edm_binary()
        cls.ws = edm_testrun.Workspace("spectra-counts").__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def run_list(self, name, rows):
        csv = os.path.join(self.ws.dir, name + ".csv")
        with open(csv, "w") as fh:
            fh.write("t0,x,y,z,ux,uy,uz,weight\n")
            for x, y, w in rows:
                fh.write(f"0,{x!r},{y!r},0,0,0,{UZ!r},{w!r}\n")
        toml = os.path.join(self.ws.dir, name + ".toml")
        with open(toml, "w") as fh:
            fh.write(CAMPAIGN.format(csv=csv))
        out = os.path.join(self.ws.dir, name)
        edm_testrun.run_edm(self.edm, "run", toml, "--quiet", "--output", out)
        return h5py.File(os.path.join(out, "spectrum.h5"), "r")

    def assert_close(self, got, want, what):
        scale = np.max(np.abs(want))
        self.assertGreater(scale, 0, what + ": the reference is all zeros")
        err = np.max(np.abs(got - want)) / scale
        self.assertLess(err, RTOL, f"{what}: max relative difference {err:.3g}")

    def test_counts_and_weights_against_the_lone_electrons(self):
        ens = self.run_list("ensemble", ELECTRONS)["/direct"]
        self.assertEqual(int(ens.attrs["electrons"]), 3)
        self.assertEqual(float(ens.attrs["weight_sum"]), math.fsum(w for _, _, w in ELECTRONS))
        lone = [self.run_list(f"lone{i}", [(x, y, 1.0)])["/direct"] for i, (x, y, _) in enumerate(ELECTRONS)]
        for g in lone:
            self.assertEqual(int(g.attrs["electrons"]), 1)
            self.assertEqual(float(g.attrs["weight_sum"]), 1.0)
        w = [e[2] for e in ELECTRONS]
        amp = sum(wi * complex_of(g["coherent_amplitude"]) for wi, g in zip(w, lone))
        self.assert_close(complex_of(ens["coherent_amplitude"]), amp, "coherent amplitude vs Σ w A")
        for q in ("d2W_domega_dOmega", "photons_per_0.1pct_bw", "photons_per_omega"):
            want = sum(wi * g["incoherent/" + q][()] for wi, g in zip(w, lone))
            self.assert_close(ens["incoherent/" + q][()], want, "incoherent " + q + " vs Σ w (lone)")
        # The coherent density is one scale times |A|² summed over x, y, z: the scale from a lone
        # electron, applied to the ensemble's Σ w A.
        a0 = complex_of(lone[0]["coherent_amplitude"])
        mag0 = np.sum(np.abs(a0) ** 2, axis=-1)
        d0 = lone[0]["coherent/d2W_domega_dOmega"][()]
        mask = mag0 > 1e-6 * mag0.max()
        scale = d0[mask] / mag0[mask]
        self.assertLess(np.ptp(scale) / np.mean(scale), RTOL, "one scale between |A|² and the coherent density")
        want = np.mean(scale) * np.sum(np.abs(amp) ** 2, axis=-1)
        self.assert_close(ens["coherent/d2W_domega_dOmega"][()], want, "coherent density vs |Σ w A|²")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
