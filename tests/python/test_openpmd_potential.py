# ctest-label: e2e
"""field.h5 of run.mode = "potential" (share/docs/potential.md) against openPMD 1.1.0 with the
checker of test_openpmd.py, and its four-potential records: the vector /A (/data/0/meshes/A, x, y,
z) and the scalar /A0 = phi/c, in V s/m with unitDimension (1, 1, -2, -1, 0, 0, 0), no /E or /B,
and A^0 = phi/c against
the Lienard-Wiechert bounds of the small cell's electrons (Coulomb's value times gamma/D).

usage: python3 tests/python/test_openpmd_potential.py EDM_BINARY
"""
import os
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edm_testrun  # noqa: E402
from test_openpmd import OpenPMDChecker, attr_str  # noqa: E402


class PotentialFieldFile(unittest.TestCase):
    binary = None

    @classmethod
    def setUpClass(cls):
        cls.ws = edm_testrun.Workspace("openpmd_potential")
        cls.run_dir = edm_testrun.make_run(cls.binary, cls.ws, "potential", mode="potential")
        cls.path = os.path.join(cls.run_dir, "field.h5")

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def test_openpmd(self):
        errors = OpenPMDChecker(self.path).check()
        self.assertEqual(errors, [], "potential field.h5 violates openPMD 1.1.0:\n" + "\n".join(errors))

    def test_record_and_units(self):
        with h5py.File(self.path, "r") as f:
            self.assertEqual(attr_str(f, "mode"), "potential")
            self.assertNotIn("E", f)
            self.assertNotIn("B", f)
            self.assertEqual(f["/A"].id, f["/data/0/meshes/A"].id)
            self.assertEqual(f["/A0"].id, f["/data/0/meshes/A0"].id)
            self.assertEqual(sorted(f["/A"].keys()), ["x", "y", "z"])
            for record in ("/A", "/A0"):
                np.testing.assert_array_equal(f[record].attrs["unitDimension"], [1, 1, -2, -1, 0, 0, 0])
            for name in ("/A0", "/A/x", "/A/y", "/A/z"):
                d = f[name]
                self.assertEqual(attr_str(d, "unit"), "V s/m")
                self.assertEqual(float(d.attrs["unitSI"]), 1.0)
                self.assertEqual(d.shape, f["/axes/y"].shape + f["/axes/x"].shape + f["/axes/t"].shape)

    def test_sign_and_size_of_phi(self):
        # The cell's electrons (q = -e, gamma = 3 towards the screen 0.02 m ahead, a0 = 0.3) give
        # phi/c = q/(4 pi eps0 c) * gamma/(R D) each, D = gamma - n.u: seen from ahead, gamma/D is at
        # most gamma*h = gamma^2 (1 + beta) (u_perp = 0, on the axis) and at least that over
        # 1 + u_perp^2 <= 1 + a0^2. phi/c per electron is negative and within those bounds of
        # Coulomb's e/(4 pi eps0 c R), where all electrons' light has arrived.
        e, eps0, c = 1.602176634e-19, 8.8541878128e-12, 299792458.0
        g = 3.0
        gh = g * g * (1 + np.sqrt(1 - 1 / g**2))
        with h5py.File(self.path, "r") as f:
            n = float(f.attrs["electron_count"])
            R = abs(float(f.attrs["screen_z"]))
            at = f["/A0"][...]
        # R is taken as |screen_z|: the electrons travel towards the screen, a fraction of a percent
        # of it (measured: 17.4976 against gamma*h = 17.4853), hence 1 % of slack on both bounds.
        ratio = at[at != 0] / (-n * e / (4 * np.pi * eps0 * c * R))
        self.assertGreater(ratio.size, 0)
        self.assertTrue(np.all(at <= 0), "phi/c of electrons must not be positive")
        self.assertLessEqual(ratio.max(), gh * 1.01)
        self.assertGreaterEqual(ratio.max(), gh / (1 + 0.3**2) * 0.99)


if __name__ == "__main__":
    PotentialFieldFile.binary = edm_testrun.edm_binary()
    unittest.main(argv=[sys.argv[0], "-v"])
