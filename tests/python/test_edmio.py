# ctest-label: e2e
"""share/python/edmio.py on run folders made by the edm binary: fields with their axes and units
(equal to what h5py reads at the documented paths), hyperslabs, the manifest as the dict tomllib
reads, γ(τ), the spectrum, and the campaign table (the [[cell]] format of share/docs/outputs.md),
including the errors for files that do not have the documented layout.

usage: python3 tests/python/test_edmio.py EDM_BINARY
"""
import os
import sys
import tomllib
import unittest

import h5py
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, os.pardir, os.pardir, "share", "python"))
import edm_testrun  # noqa: E402
import edmio  # noqa: E402

CAMPAIGN_TABLE = """
[campaign]
name = "a0 ladder"
base = "cell.toml"

[[cell]]
label = "a0=0.1"
state = "done"
wall_s = 12.5
[cell.overrides]
"laser.a0" = 0.1
[cell.results]
energy = 1.5e-12
peak_omega = 3.2e16

[[cell]]
label = "a0=0.2"
state = "failed"
wall_s = 0.4
error = "EDM-PHYS-003: window does not cover the screen"
[cell.overrides]
"laser.a0" = 0.2

[[cell]]
label = "a0=0.3"
state = "pending"
[cell.overrides]
"laser.a0" = 0.3
"""


class LoadsARunFolder(unittest.TestCase):
    binary = None

    @classmethod
    def setUpClass(cls):
        cls.ws = edm_testrun.Workspace("edmio")
        cls.total = edm_testrun.make_run(cls.binary, cls.ws, "total", spectrum=True)
        cls.split = edm_testrun.make_run(cls.binary, cls.ws, "split", mode="split")

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def test_fields_with_axes_and_units(self):
        run = edmio.load_run(self.total)
        self.assertEqual(run.components, ["E/x", "E/y", "E/z", "B/x", "B/y", "B/z"])
        with h5py.File(os.path.join(self.total, "field.h5"), "r") as f:
            for name in run.components:
                fld = run.field(name)
                np.testing.assert_array_equal(fld.data, f["/" + name][...])
                self.assertEqual(fld.unit, "V/m" if name[0] == "E" else "T")
                self.assertEqual(fld.labels, ("y", "x", "t"))
                self.assertEqual(fld.axis_units, {"y": "m", "x": "m", "t": "s"})
                for a in ("x", "y", "t"):
                    np.testing.assert_array_equal(fld.axes[a], f["/axes/" + a][...])
            self.assertEqual(fld.data.shape, (5, 6, 256))
            self.assertEqual(run.attrs["mode"], "total")
            self.assertEqual(run.attrs["openPMD"], "1.1.0")
            self.assertEqual(run.attrs["electron_count"], 4)
            np.testing.assert_array_equal(run.gamma["mean"], f["/gamma/mean"][...])
        self.assertTrue(np.any(run.field("E/x").data != 0))

    def test_hyperslabs(self):
        run = edmio.load_run(self.total)
        full = run.field("B/y").data
        trace = run.field("B/y", iy=2, ix=3)
        self.assertEqual(trace.labels, ("t",))
        np.testing.assert_array_equal(trace.data, full[2, 3, :])
        self.assertEqual(trace.coords, {"y": float(run.axes["y"][2]), "x": float(run.axes["x"][3])})
        frame = run.field("/B/y", it=slice(10, 20))
        self.assertEqual(frame.labels, ("y", "x", "t"))
        np.testing.assert_array_equal(frame.data, full[:, :, 10:20])
        np.testing.assert_array_equal(frame.axes["t"], run.axes["t"][10:20])
        np.testing.assert_array_equal(run["/B/y"][2, 3, :], full[2, 3, :])
        self.assertEqual(run["/B/y"].shape, full.shape)
        self.assertIn("/gamma/tau", run)
        self.assertNotIn("/E_far/x", run)

    def test_split_mode_components(self):
        run = edmio.load_run(self.split)
        self.assertEqual(len(run.components), 12)
        self.assertIn("E_far/z", run.components)
        self.assertEqual(run.field("B_far/x").unit, "T")
        self.assertIsNone(run.spectrum)  # no `edm spectrum` ran here

    def test_manifest_is_a_dict(self):
        run = edmio.load_run(self.total)
        with open(os.path.join(self.total, "run.toml"), "rb") as fh:
            self.assertEqual(run.manifest, tomllib.load(fh))
        self.assertEqual(run.manifest["provenance"]["run_id"], run.attrs["run_id"])
        self.assertEqual(edmio.load_manifest(self.total), run.manifest)

    def test_spectrum(self):
        spec = edmio.load_run(self.total).spectrum
        self.assertIsInstance(spec, edmio.Spectrum)
        with h5py.File(os.path.join(self.total, "spectrum.h5"), "r") as s:
            np.testing.assert_array_equal(spec.omega, s["/axes/omega"][...])
            np.testing.assert_array_equal(spec.on_axis, s["/on_axis/d2I_domega_dOmega"][...])
            np.testing.assert_array_equal(spec["/pixel/fluence"], s["/pixel/fluence"][...])
            self.assertEqual(spec.attrs["total_energy"], float(s.attrs["total_energy"]))
            self.assertEqual(spec.attrs_of("/on_axis")["ix"], float(s["/on_axis"].attrs["ix"]))
        self.assertEqual(spec.units["/pixel/fluence"], "J/m^2")
        self.assertTrue(spec.attrs["edm_layout"].startswith("edm "))
        self.assertGreater(spec.attrs["total_energy"], 0)
        self.assertEqual(edmio.load_spectrum(self.total).data.keys(), spec.data.keys())

    def test_missing_things_are_clear_errors(self):
        with self.assertRaisesRegex(edmio.EdmReadError, "no such run folder"):
            edmio.load_run(os.path.join(self.ws.dir, "nowhere"))
        empty = os.path.join(self.ws.dir, "empty")
        os.makedirs(empty, exist_ok=True)
        with self.assertRaisesRegex(edmio.EdmReadError, "field.h5: no such file"):
            edmio.load_run(empty)
        with self.assertRaisesRegex(edmio.EdmReadError, "spectrum.h5: no such file"):
            edmio.load_spectrum(empty)
        with self.assertRaisesRegex(edmio.EdmReadError, "has no E_far/x"):
            edmio.load_run(self.total).field("E_far/x")


class LoadsACampaignTable(unittest.TestCase):
    def setUp(self):
        self.ws = edm_testrun.Workspace("edmio-campaign")

    def tearDown(self):
        self.ws.__exit__(None, None, None)

    def write(self, text, name="campaign.toml"):
        path = os.path.join(self.ws.dir, name)
        with open(path, "w") as fh:
            fh.write(text)
        return path

    def test_rows(self):
        self.write(CAMPAIGN_TABLE)
        c = edmio.load_campaign(self.ws.dir)
        self.assertEqual(len(c), 3)
        self.assertEqual(c.meta["name"], "a0 ladder")
        self.assertEqual([x.label for x in c], ["a0=0.1", "a0=0.2", "a0=0.3"])
        self.assertEqual([x.state for x in c], ["done", "failed", "pending"])
        done = c["a0=0.1"]
        self.assertEqual(done.overrides, {"laser.a0": 0.1})
        self.assertEqual(done.results["energy"], 1.5e-12)
        self.assertEqual(done.wall_s, 12.5)
        self.assertIsNone(done.error)
        self.assertTrue(c["a0=0.2"].error.startswith("EDM-PHYS-003"))
        self.assertIsNone(c["a0=0.3"].wall_s)
        np.testing.assert_array_equal(c.column("overrides.laser.a0"), [0.1, 0.2, 0.3])
        np.testing.assert_array_equal(c.column("results.energy"), [1.5e-12, np.nan, np.nan])
        np.testing.assert_array_equal(c.column("results.energy", state="done"), [1.5e-12])
        self.assertEqual(list(c.column("state")), ["done", "failed", "pending"])
        with self.assertRaisesRegex(edmio.EdmReadError, "no cell"):
            c["a0=9"]
        with self.assertRaisesRegex(edmio.EdmReadError, "no column"):
            c.column("energy")

    def test_empty_table(self):
        self.assertEqual(len(edmio.load_campaign(self.write("[campaign]\nname = 'x'\n"))), 0)

    def test_bad_tables(self):
        bad = {
            "state": ('[[cell]]\nlabel = "a"\nstate = "finished"\n', "state 'finished' is not one of"),
            "label": ('[[cell]]\nstate = "done"\n', "label must be a non-empty string"),
            "duplicate": ('[[cell]]\nlabel = "a"\nstate = "done"\n[[cell]]\nlabel = "a"\nstate = "pending"\n',
                          "two cells are labelled 'a'"),
            "wall": ('[[cell]]\nlabel = "a"\nstate = "done"\nwall_s = -1\n', "wall_s must be"),
            "overrides": ('[[cell]]\nlabel = "a"\nstate = "done"\noverrides = 3\n', "overrides must be a table"),
            "unknown_key": ('[[cell]]\nlabel = "a"\nstate = "done"\ncolour = "red"\n', "unknown key(s) colour"),
            "unknown_table": ('[cells]\nx = 1\n', "unknown table(s) cells"),
            "not_array": ('cell = 3\n', "array of tables"),
            "toml": ('[[cell]\n', "not valid TOML"),
        }
        for name, (text, message) in bad.items():
            with self.assertRaises(edmio.EdmReadError, msg=name) as e:
                edmio.load_campaign(self.write(text, name + ".toml"))
            self.assertIn(message, str(e.exception), name)
        with self.assertRaisesRegex(edmio.EdmReadError, "no such file"):
            edmio.load_campaign(os.path.join(self.ws.dir, "nowhere.toml"))


if __name__ == "__main__":
    LoadsARunFolder.binary = edm_testrun.edm_binary()
    unittest.main(argv=[sys.argv[0], "-v"])
