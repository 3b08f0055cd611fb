# ctest-label: e2e
"""edm compare --plot (issue 31 item 5, share/docs/compare.md): the PNG is written, is a PNG, and its
title and panels name the component of largest relative L2 (read from --json); the time sample it
draws is the one of largest |A − B|, found here from field.h5 with h5py; a FAIL verdict still plots;
a folder gets compare.png; the spectrum path of the script draws a harmonic map's phase; --mirror-z
draws B reflected (thomson against inverse_thomson at γ = 1: A − B is 0); and a
refusal (runs of other screens, a bad --plot path) writes nothing, not even a temporary file.

usage: python3 tests/python/test_compare_plot.py EDM_BINARY
"""
import json
import os
import re
import subprocess
import sys
import unittest

import h5py
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.normpath(os.path.join(here, os.pardir, os.pardir))
sys.path.insert(0, here)
import edm_testrun  # noqa: E402
from test_plot import png_text  # noqa: E402

SCRIPT = os.path.join(source, "share", "plot", "edm_compare_plot.py")
BINARY = None
WS = None
RUNS = {}


def run_of(name, edit=lambda text: text, spectrum=False):
    """A run of the small cell, its campaign text edited; cached by name."""
    if name not in RUNS:
        path = WS.campaign(name)
        with open(path) as fh:
            text = edit(fh.read())
        with open(path, "w") as fh:
            fh.write(text)
        out = os.path.join(WS.dir, name)
        edm_testrun.run_edm(BINARY, "run", path, "--quiet", "--output", out)
        if spectrum:
            edm_testrun.run_edm(BINARY, "spectrum", out, "--harmonics", "1")
        RUNS[name] = out
    return RUNS[name]


def newton1():
    return run_of("newton1", lambda t: t + "newton_iters = 1\n", spectrum=True)


def reference():
    return run_of("reference", spectrum=True)


def edm(*args):
    p = subprocess.run([BINARY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=280)
    return p.returncode, p.stdout, p.stderr


def script(out, row):
    """edm_compare_plot.py on newton1 against the reference for one row of edm compare's --json."""
    return subprocess.run([sys.executable, SCRIPT, newton1(), reference(), out, "--file", row["file"], "--dataset",
                           row["dataset"], "--measure", row["measure"], "--rel-l2", str(row["rel_l2"])],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg"})


def leftovers(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith(".partial") or f.endswith(".png"))


class ComparePlot(unittest.TestCase):
    def compare_json(self, out, *more):
        rc, stdout, stderr = edm("compare", newton1(), reference(), "--json", "--plot", out, *more)
        return rc, (json.loads(stdout) if stdout.strip().startswith("{") else None), stderr

    def test_plot_names_the_largest_component_and_its_sample(self):
        out = os.path.join(WS.dir, "diff.png")
        rc, result, stderr = self.compare_json(out, "--tol", "1")
        self.assertEqual(rc, 0, stderr)
        worst = max(result["rows"], key=lambda r: float(r["rel_l2"]))
        self.assertGreater(float(worst["rel_l2"]), 0.0)
        with open(out, "rb") as fh:
            self.assertEqual(fh.read(8), b"\x89PNG\r\n\x1a\n")
        text = png_text(out)
        self.assertEqual(text["edm:dataset"], worst["dataset"])
        self.assertEqual(text["edm:measure"], worst["measure"])
        self.assertEqual(text["edm:file"], worst["file"])
        self.assertIn(f"edm compare: {worst['dataset']} {worst['measure']} ({worst['file']})", text["Title"])
        panels = text["edm:panels"].split(" | ")
        self.assertEqual(len(panels), 5 if worst["file"] == "field.h5" else 3, panels)
        print(f"largest: {worst['file']} {worst['dataset']} {worst['measure']} {worst['rel_l2']}", file=sys.stderr)
        for p in panels[:3]:
            self.assertIn(worst["dataset"].strip("/"), p)
        self.assertTrue(panels[0].startswith("A: ") and panels[1].startswith("B (reference): ")
                        and panels[2].startswith("A − B: "), panels)
        # The field path, for the field.h5 row of largest difference (what edm compare draws when a
        # field component leads): the sample drawn is the one of largest |A − B| over the cube, found here.
        field = max((r for r in result["rows"] if r["file"] == "field.h5"), key=lambda r: float(r["rel_l2"]))
        self.assertGreater(float(field["rel_l2"]), 0.0, "the Newton steps move the field")
        fpng = os.path.join(WS.dir, "field.png")
        p = script(fpng, field)
        self.assertEqual(p.returncode, 0, p.stdout)
        ftext = png_text(fpng)
        with h5py.File(os.path.join(newton1(), "field.h5")) as fa, h5py.File(os.path.join(reference(), "field.h5")) as fb:
            d = np.abs(fa[field["dataset"]][...] - fb[field["dataset"]][...])
        it = int(np.unravel_index(np.argmax(d), d.shape)[2])
        self.assertIn(f"(sample {it})", ftext["edm:where"])
        fpanels = ftext["edm:panels"].split(" | ")
        self.assertEqual(len(fpanels), 5, fpanels)
        self.assertIn(f"A: {field['dataset'].strip('/')} at t = ", fpanels[0])
        self.assertIn("|A| − |B|: harmonic_field/", fpanels[3], "the harmonic maps' differences are drawn too")
        self.assertIn("arg A − arg B: harmonic_field/", fpanels[4])
        os.unlink(fpng)
        self.assertEqual(leftovers(WS.dir), ["diff.png"])
        os.unlink(out)

    def test_fail_verdict_still_plots_and_a_folder_gets_compare_png(self):
        folder = os.path.join(WS.dir, "plots_here")
        os.makedirs(folder)
        rc, result, stderr = self.compare_json(folder, "--tol", "0")
        self.assertEqual(rc, 8, stderr)
        self.assertFalse(result["pass"])
        self.assertEqual(leftovers(folder), ["compare.png"])
        self.assertIn("edm:dataset", png_text(os.path.join(folder, "compare.png")))

    def test_spectrum_dataset_phase_panels(self):
        """The script's spectrum path (a dataset edm compare would pick when only the spectra differ)."""
        out = os.path.join(WS.dir, "phase.png")
        p = script(out, {"file": "spectrum.h5", "dataset": "harmonic_field/circular", "measure": "phase",
                         "rel_l2": 0.5})
        self.assertEqual(p.returncode, 0, p.stdout)
        text = png_text(out)
        self.assertIn("edm compare: harmonic_field/circular phase (spectrum.h5)", text["Title"])
        self.assertIn("A − B: arg harmonic_field/circular phase", text["edm:panels"])
        self.assertRegex(text["edm:where"], r"slice index \d+")
        os.unlink(out)

    def test_mirror_runs_plot_b_reflected(self):
        """--mirror-z: thomson against inverse_thomson at γ = 1 (screens at ±2 cm) compare to 0, and the
        plot draws B reflected: a panel says so, and A − B is 0 (the largest |A − B| is 0)."""
        th = run_of("mirror_th", lambda t: t.replace('scenario = "inverse_thomson"', 'scenario = "thomson"'))
        it = run_of("mirror_it", lambda t: t.replace("gamma = 3.0", "gamma = 1.0").replace("distance = 0.02",
                                                                                          "distance = -0.02"))
        out = os.path.join(WS.dir, "mirror.png")
        rc, stdout, stderr = edm("compare", th, it, "--mirror-z", "--tol", "0", "--json", "--plot", out)
        self.assertEqual(rc, 0, stdout + stderr)
        result = json.loads(stdout)
        self.assertEqual({float(r["rel_l2"]) for r in result["rows"]}, {0.0})
        text = png_text(out)
        self.assertIn("B (reference) mirrored: ", text["edm:panels"])
        self.assertEqual(float(text["edm:rel_l2"]), 0.0)
        rc, stdout, stderr = edm("compare", th, it, "--plot", out + ".2.png")
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertIn("screen.distance differs", stderr)
        self.assertFalse(os.path.exists(out + ".2.png"))
        os.unlink(out)

    def test_refusals_write_nothing(self):
        folder = os.path.join(WS.dir, "refused")
        os.makedirs(folder)
        other = run_of("nx7", lambda t: t.replace("nx = 6", "nx = 7"))
        rc, stdout, stderr = edm("compare", newton1(), other, "--plot", os.path.join(folder, "x.png"))
        self.assertEqual(rc, 2, stdout + stderr)
        self.assertIn("[EDM-CMP-001]", stderr)
        self.assertIn("screen.nx differs (6 in A, 7 in B)", stderr)
        for bad, why in ((os.path.join(folder, "missing", "x.png"), "does not exist"),
                         (os.path.join(folder, "x.txt"), "neither a folder nor a file name ending in .png")):
            rc, stdout, stderr = edm("compare", newton1(), reference(), "--plot", bad)
            self.assertEqual(rc, 2, stdout + stderr)
            self.assertIn("[EDM-CMP-003]", stderr)
            self.assertIn(why, stderr)
            self.assertEqual(stdout, "", "refused before anything is compared")
        self.assertEqual(os.listdir(folder), [])
        # A script that fails leaves the table and verdict printed, exit 4, and no PNG.
        env_rc = subprocess.run([BINARY, "compare", newton1(), reference(), "--plot", os.path.join(folder, "y.png")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=280,
                                env={**os.environ, "EDM_COMPARE_PLOT_SCRIPT": os.path.join(folder, "none.py")})
        self.assertEqual(env_rc.returncode, 4, env_rc.stderr)
        self.assertIn("[EDM-CMP-005]", env_rc.stderr)
        self.assertTrue(re.search(r"(PASS|FAIL): largest relative L2", env_rc.stdout), env_rc.stdout)
        self.assertEqual(os.listdir(folder), [])


if __name__ == "__main__":
    BINARY = edm_testrun.edm_binary()
    with edm_testrun.Workspace("compare-plot") as ws:
        WS = ws
        unittest.main(argv=sys.argv[:1], verbosity=2)
