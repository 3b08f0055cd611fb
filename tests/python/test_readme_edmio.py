# ctest-label: e2e
"""The edmio examples of README.md and share/docs/outputs.md run as written: every ```python block
that uses edmio is taken from the two pages and executed, with warnings as errors, in a folder that
holds what the examples name — runs/quickstart (share/campaigns/quickstart.toml: its 32 × 32 screen,
4 electrons instead of 16 to stay small, with its spectrum.h5), OUTPUT/campaign.toml (a campaign
table) and share/ (the source tree's). The values the blocks leave behind are then checked against
h5py's reading of the same files. Also: edmio's errors for an index outside an axis and for a missing
file are EdmioError with the file and dataset named (issue 29: the README's `iy=32, ix=32` on its own
32 × 32 run raised a bare numpy IndexError).

usage: python3 tests/python/test_readme_edmio.py EDM_BINARY
"""
import os
import re
import sys
import unittest
import warnings

import h5py
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.normpath(os.path.join(here, os.pardir, os.pardir))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(source, "share", "python"))
import edm_testrun  # noqa: E402
import edmio  # noqa: E402

TABLE = """[campaign]
name = "a0 ladder"

[[cell]]
label = "a0=0.1"
state = "done"
wall_s = 1.5
[cell.overrides]
"laser.a0" = 0.1
[cell.results]
energy = 2.0e-12
"""


def python_blocks(page):
    """The ```python blocks of a page that use edmio, in page order."""
    with open(os.path.join(source, page), encoding="utf-8") as fh:
        text = fh.read()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    return [b for b in blocks if "edmio" in b]


class ReadmeExamples(unittest.TestCase):
    binary = None

    @classmethod
    def setUpClass(cls):
        cls.ws = edm_testrun.Workspace("readme")
        d = cls.ws.dir
        os.symlink(os.path.join(source, "share"), os.path.join(d, "share"))
        cls.run_dir = os.path.join(d, "runs", "quickstart")
        edm_testrun.run_edm(cls.binary, "run", os.path.join(source, "share", "campaigns", "quickstart.toml"),
                            "--quiet", "--set", "electrons.count=4", "--output", cls.run_dir)
        edm_testrun.run_edm(cls.binary, "spectrum", cls.run_dir)
        os.makedirs(os.path.join(d, "OUTPUT"))
        with open(os.path.join(d, "OUTPUT", "campaign.toml"), "w") as fh:
            fh.write(TABLE)

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def run_block(self, page, block):
        cwd = os.getcwd()
        os.chdir(self.ws.dir)
        names = {"__name__": "readme_example"}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                exec(compile(block, f"{page} (python block)", "exec"), names)
        except Exception as e:  # noqa: BLE001 - the block's own error is the failure to report
            self.fail(f"{page}: the edmio example raised {type(e).__name__}: {e}\n--- block ---\n{block}")
        finally:
            os.chdir(cwd)
        return names

    def check_values(self, page, names):
        with h5py.File(os.path.join(self.run_dir, "field.h5"), "r") as f:
            full = f["/E/x"][...]
            x, y = f["/axes/x"][...], f["/axes/y"][...]
        self.assertEqual(full.shape[:2], (32, 32), "the README's run is 32 × 32")
        np.testing.assert_array_equal(names["Ex"].data, full, err_msg=page)
        trace = names["trace"]
        iy = int(np.argmin(np.abs(y - trace.coords["y"])))
        ix = int(np.argmin(np.abs(x - trace.coords["x"])))
        np.testing.assert_array_equal(trace.data, full[iy, ix, :], err_msg=page)
        self.assertEqual(trace.labels, ("t",))
        self.assertEqual(len(names["cells"]), 1)
        self.assertEqual(names["run"].manifest["laser"]["omega"], edmio.load_manifest(self.run_dir)["laser"]["omega"])

    def test_readme_blocks(self):
        blocks = python_blocks("README.md")
        self.assertGreaterEqual(len(blocks), 1, "README.md has no edmio example")
        for b in blocks:
            self.check_values("README.md", self.run_block("README.md", b))

    def test_outputs_page_blocks(self):
        blocks = python_blocks("share/docs/outputs.md")
        self.assertGreaterEqual(len(blocks), 1, "outputs.md has no edmio example")
        sys.path.insert(0, os.path.join(source, "share", "python"))  # "Put its folder on PYTHONPATH"
        for b in blocks:
            names = self.run_block("share/docs/outputs.md", b)
            self.check_values("share/docs/outputs.md", names)
            np.testing.assert_array_equal(names["spec"].on_axis, names["run"].spectrum.on_axis)

    def test_index_outside_an_axis_names_file_and_dataset(self):
        run = edmio.load_run(self.run_dir)
        for kw, arg in (({"iy": 32, "ix": 0}, "iy=32"), ({"iy": 0, "ix": -33}, "ix=-33"), ({"it": 2048}, "it=2048")):
            with self.assertRaises(edmio.EdmioError) as e:
                run.field("E/x", **kw)
            self.assertIsInstance(e.exception, IndexError)  # numpy's habit, kept
            msg = str(e.exception)
            self.assertIn("field.h5", msg)
            self.assertIn("/E/x", msg)
            self.assertIn(arg, msg)
        last = run.field("E/x", iy=-1, ix=-1)
        np.testing.assert_array_equal(last.data, run.field("E/x").data[31, 31, :])
        self.assertEqual(last.coords["y"], float(run.axes["y"][31]))
        with self.assertRaises(edmio.EdmioError) as e:
            run["/E/x"][40, 0, 0]
        self.assertIn("/E/x", str(e.exception))
        with self.assertRaises(edmio.EdmioError):
            run.field("E/x", iy=1.5)

    def test_error_classes(self):
        self.assertTrue(issubclass(edmio.EdmioError, ValueError))
        self.assertIs(edmio.EdmReadError, edmio.EdmioError)
        missing = os.path.join(self.ws.dir, "nowhere")
        with self.assertRaises(edmio.EdmioFileError) as e:
            edmio.load_run(missing)
        self.assertIsInstance(e.exception, OSError)
        self.assertIn(missing, str(e.exception))
        with self.assertRaises(OSError):
            edmio.load_spectrum(os.path.join(self.ws.dir, "OUTPUT"))
        with self.assertRaises(edmio.EdmioError) as e:
            edmio.load_run(self.run_dir).field("E_far/x")
        self.assertNotIsInstance(e.exception, OSError)
        self.assertIn("field.h5 has no E_far/x", str(e.exception))


if __name__ == "__main__":
    ReadmeExamples.binary = edm_testrun.edm_binary()
    unittest.main(argv=[sys.argv[0], "-v"])
