# ctest-label: e2e
"""Hostile numeric inputs through every electron path (issue 30): the CSV list, a tracks file and an
openPMD series obey the same bounds (share/docs/ensembles.md, "Ranges"), and a declared size is
checked before anything is allocated.

Each case once ran with exit 0 and a wrong field (a position unitSI of 0 put every electron at the
origin; weights of 1e300 gave a field of inf) or ended in bad_alloc as an internal error (a constant
component declaring 1e11 particles). Each must now be refused with its id, the exit code of its
family, the file and the value, and leave no field.h5 behind.

usage: python3 tests/python/test_hostile_inputs.py EDM_BINARY
"""
import os
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edm_testrun  # noqa: E402
import test_openpmd_particles as tp  # noqa: E402  (the series writer, written from the standard)


def write_tracks(path, mutate=None, steps=tp.BAD_STEPS):
    """Two tracks of the openPMD test's trajectories, in SI, as an edm tracks file."""
    t = tp.times()[:steps]
    with h5py.File(path, "w") as f:
        for index in range(2):
            g = f.create_group(f"/tracks/{index:06d}")
            g["t"] = t
            for name, v in zip(("x", "y", "z", "ux", "uy", "uz"), tp.trajectory(index, t)):
                g[name] = np.asarray(v, dtype=np.float64)
            if mutate:
                mutate(index, g)
    return path


class HostileInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.edm = edm_testrun.edm_binary()
        cls.ws = edm_testrun.Workspace("hostile-inputs").__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def refused(self, name, text, code, *says):
        path = os.path.join(self.ws.dir, name + ".toml")
        with open(path, "w") as fh:
            fh.write(text)
        out = os.path.join(self.ws.dir, name)
        p = edm_testrun.run_edm(self.edm, "run", path, "--quiet", "--output", out, check=False)
        self.assertEqual(p.returncode, code, f"{name}: {p.stdout}")
        for s in says:
            self.assertIn(s, p.stdout, name)
        self.assertFalse(os.path.exists(os.path.join(out, "field.h5")), f"{name}: no field.h5 after a refusal")
        self.assertFalse(os.path.exists(os.path.join(out, "field.h5.partial")), name)

    def trajectory_campaign(self, model, file):
        return tp.CAMPAIGN.format(lam=tp.LAMBDA, model=model, file=file, species="", dist=tp.DISTANCE,
                                  t_start=8 * tp.T + tp.DISTANCE / tp.C)

    def openpmd(self, name, mutate):
        return tp.write_group_based(os.path.join(self.ws.dir, name + ".h5"), mutate, extra_species=False,
                                    steps=tp.BAD_STEPS)

    def test_openpmd_values_are_bounded_like_the_csv_list(self):
        def position_unit_zero(step, it, sp):
            sp["position/y"].attrs["unitSI"] = 0.0

        def time_unit_negative(step, it, sp):
            it.attrs["timeUnitSI"] = -1e-15

        def huge_weighting(step, it, sp):
            sp["weighting"][...] = np.array([1e300, 1e300])
            sp["momentum"].attrs["macroWeighted"] = np.uint32(0)

        def huge_momentum(step, it, sp):
            sp["momentum/z"][...] = sp["momentum/z"][...] * 1e12

        def far_position(step, it, sp):
            sp["position/x"].attrs["unitSI"] = 1e6   # nm read as mm: particles 1e9 m away

        cases = [
            ("unit_zero", position_unit_zero, ["EDM-IO-128", "position/y", "unitSI = 0"]),
            ("time_unit", time_unit_negative, ["EDM-IO-128", "timeUnitSI = -1e-15"]),
            ("weighting", huge_weighting, ["EDM-IO-129", "particle id", "weight = 1e+300", "1e30"]),
            ("momentum", huge_momentum, ["EDM-IO-129", "particle id", "|u| =", "1e8"]),
            ("position", far_position, ["EDM-IO-129", "particle id", "x = ", "1e3 m"]),
        ]
        for name, mutate, says in cases:
            file = self.openpmd(name, mutate)
            self.refused("pmd_" + name, self.trajectory_campaign("openpmd", file), 4, file, *says)

    def test_an_openpmd_shape_is_bounded_before_allocation(self):
        def huge_shape(step, it, sp):
            sp["positionOffset/x"].attrs["shape"] = np.array([1e11], dtype=np.uint64)

        file = self.openpmd("shape", huge_shape)
        self.refused("pmd_shape", self.trajectory_campaign("openpmd", file), 4, file, "EDM-IO-130",
                     "positionOffset/x", "shape 1e+11", "2 particles")

    def test_openpmd_messages_name_the_real_cause(self):
        def negative_ids(step, it, sp):
            del sp["id"]
            sp["id"] = np.array([-3, -7], dtype=np.int64)

        # Negative ids were converted to 0 and reported as "particle id 0 appears twice".
        file = self.openpmd("negative_ids", negative_ids)
        self.refused("pmd_negative_ids", self.trajectory_campaign("openpmd", file), 4, file, "EDM-IO-131",
                     "/id: element 0 is -3", ">= 0")
        # A folder was reported as not found.
        folder = os.path.join(self.ws.dir, "series_folder")
        os.makedirs(folder, exist_ok=True)
        self.refused("pmd_folder", self.trajectory_campaign("openpmd", folder), 2, folder, "EDM-CFG-009",
                     "is a folder, not a file", "data%T.h5")

    def test_tracks_values_are_bounded_like_the_csv_list(self):
        def weight(index, g):
            if index == 1:
                g["w"] = 1e300

        def position(index, g):
            if index == 0:
                z = g["z"][...]
                z[5] = 2e3
                g["z"][...] = z

        def momentum(index, g):
            if index == 1:
                g["ux"][...] = g["ux"][...] + 1e9

        cases = [
            ("weight", weight, ["/tracks/000001 sample 0", "weight = 1e+300"]),
            ("position", position, ["/tracks/000000 sample 5", "z = 2000 m"]),
            ("momentum", momentum, ["/tracks/000001 sample 0", "|u| ="]),
        ]
        for name, mutate, says in cases:
            file = write_tracks(os.path.join(self.ws.dir, "tracks_" + name + ".h5"), mutate)
            self.refused("tracks_" + name, self.trajectory_campaign("tracks", file), 4, file, "EDM-IO-055", *says)

    def test_csv_positions_and_times_are_bounded(self):
        uz = 2.8284271247461903
        for name, row, says in [
            ("x", (0.0, 1e300, 0.0, 0.0, 0.0, 0.0, uz), ["x = 1e+300 m", "1e3 m"]),
            ("t0", (5.0, 0.0, 0.0, 0.0, 0.0, 0.0, uz), ["t = 5 s", "1 s"]),
        ]:
            csv = os.path.join(self.ws.dir, "list_" + name + ".csv")
            with open(csv, "w") as fh:
                fh.write("t0,x,y,z,ux,uy,uz\n0,0,0,0,0,0,%r\n" % uz + ",".join(repr(v) for v in row) + "\n")
            self.refused("csv_" + name, tp.WEIGHTED_CELL.format(csv=csv, batch=0), 2, "EDM-CFG-662",
                         csv + ":3:", *says)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
