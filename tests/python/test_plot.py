# ctest-label: e2e
"""edm plot on the products of a run (issue 29): an angular screen at infinity plotted in mrad with no
warning from numpy or matplotlib (the script also under `python3 -W error`); the raw spectra with the
Nyquist frequency marked and the harmonics above it named where they alias; spectrum.h5's /direct
drawn with the total photon number into the grid, checked against a sum written here from the
photon-unit definitions; spectrum.h5 computed again when --window, --harmonics or --of differ from
what it records, and kept when they do not; a flat screen with /direct; and the kernel build quiet on
stderr under `edm run -q` (PoCL printed "1 warning generated." for cl/lw_simd.cl on every build).

The numbers a plot shows are read back from its PNG text chunks (edm_plot.py writes them as
"edm:<name>" beside the title).

usage: python3 tests/python/test_plot.py EDM_BINARY
"""
import os
import struct
import subprocess
import sys
import unittest

import h5py
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
source = os.path.normpath(os.path.join(here, os.pardir, os.pardir))
sys.path.insert(0, here)
import edm_testrun  # noqa: E402

SCRIPT = os.path.join(source, "share", "plot", "edm_plot.py")
FAR_FIELD = os.path.join(source, "share", "campaigns", "far_field_spectra.toml")
HBAR_SI = 6.62607015e-34 / (2 * np.pi)


def png_text(path):
    """The tEXt chunks of a PNG as a dict."""
    out = {}
    with open(path, "rb") as fh:
        data = fh.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    at = 8
    while at < len(data):
        (n,), kind = struct.unpack(">I", data[at:at + 4]), data[at + 4:at + 8]
        body = data[at + 8:at + 8 + n]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt":  # text beyond latin-1 (θ): keyword, flag, method, language, key, UTF-8
            key, _, rest = body.partition(b"\0")
            assert rest[0] == 0, f"{path}: compressed iTXt"
            _, _, rest = rest[2:].partition(b"\0")
            _, _, value = rest.partition(b"\0")
            out[key.decode("latin-1")] = value.decode("utf-8")
        at += 12 + n
    return out


def edm(binary, *args, env=None):
    p = subprocess.run([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=280,
                       env=env)
    return p.returncode, p.stdout, p.stderr


def foreign_lines(stderr):
    """stderr lines that are neither edm's own notes nor the script's own warnings: a numpy or
    matplotlib warning, a traceback."""
    own = ("[plot] ", "edm_plot.py: warning: harmonic ")
    return [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(own)]


class PlotsOfARun(unittest.TestCase):
    binary = None

    @classmethod
    def setUpClass(cls):
        cls.ws = edm_testrun.Workspace("plot")
        cls.far = os.path.join(cls.ws.dir, "far")
        # The README's far-field example, 4 electrons and 32 frequencies: its spectrum.h5 holds only
        # /direct until edm plot computes the rest.
        rc, out, err = edm(cls.binary, "run", FAR_FIELD, "--quiet", "--set", "electrons.count=4", "--set",
                           "spectra.count=32", "--output", cls.far)
        assert rc == 0, out + err
        rc, cls.plot_out, cls.plot_err = edm(cls.binary, "plot", cls.far)
        assert rc == 0, cls.plot_out + cls.plot_err

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def png(self, name):
        path = os.path.join(self.far, "plots", name)
        self.assertTrue(os.path.exists(path), f"{name} was not drawn")
        return png_text(path)

    def test_angular_run_plots_in_mrad_without_warnings(self):
        self.assertEqual(foreign_lines(self.plot_err), [], self.plot_err)
        for name in ("fluence.png", "harmonic_1.png"):
            axes = self.png(name)["edm:axes"]
            self.assertEqual(axes, "θx (mrad) | θy (mrad)", name)
        # The script itself with every Python warning an error. Debian's pyparsing switches on its
        # own grammar diagnostics whenever warnings are errors, and they fire inside matplotlib's
        # mathtext grammar (log-axis tick labels): -W ignore:::pyparsing keeps them off.
        p = subprocess.run([sys.executable, "-W", "error", "-W", "ignore:::pyparsing", SCRIPT, self.far],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=280,
                           env=dict(os.environ, MPLBACKEND="Agg"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(foreign_lines(p.stderr), [], p.stderr)

    def test_nyquist_and_aliases_are_marked_and_named(self):
        # The far-field example at its former sampling (512 samples per period, Nyquist 256 ω_L): the
        # line's 3rd harmonic (≈ 292 ω_L) lies above Nyquist. The example itself now samples at 1600
        # per period, so that its dft spectra hold no alias.
        alias = os.path.join(self.ws.dir, "alias")
        rc, out, err = edm(self.binary, "run", FAR_FIELD, "--quiet", "--set", "electrons.count=4", "--set",
                           "spectra.enabled=false", "--set", 'screen.window="auto"', "--set", "screen.samples=2048",
                           "--set", "screen.samples_per_period=512", "--output", alias)
        self.assertEqual(rc, 0, out + err)
        rc, plot_out, plot_err = edm(self.binary, "plot", alias)
        self.assertEqual(rc, 0, plot_out + plot_err)
        self.assertEqual(foreign_lines(plot_err), [], plot_err)
        with h5py.File(os.path.join(alias, "spectrum.h5"), "r") as s:
            nyq, wl = float(s.attrs["nyquist_omega"]), float(s.attrs["laser_omega"])
            base = float(s["harmonics"].attrs["base_omega"])
        self.assertGreater(3 * base, nyq)  # the example's 3rd harmonic lies above Nyquist
        self.assertLess(2 * base, nyq)
        expected = {n: 2 * nyq - n * base if (n * base) % (2 * nyq) > nyq else (n * base) % (2 * nyq)
                    for n in range(3, 7)}
        for name in ("spectrum_on_axis.png", "spectrum_integrated.png", "spectrum_vs_angle.png"):
            meta = png_text(os.path.join(alias, "plots", name))
            self.assertAlmostEqual(float(meta["edm:nyquist_omega_laser"]), nyq / wl, places=3)
            marked = dict(item.split(" ", 1) for item in meta["edm:aliases"].split("; "))
            self.assertEqual(sorted(marked), [f"n={n}" for n in range(3, 7)], name)
            for n, f in expected.items():
                at = float(marked[f"n={n}"].split("->")[1])
                self.assertAlmostEqual(at, f / wl, delta=1e-4 * nyq / wl, msg=f"{name}: n={n}")
        warned = [ln for ln in plot_err.splitlines() if ln.startswith("edm_plot.py: warning: harmonic 3 ")]
        self.assertEqual(len(warned), 1, plot_err)
        self.assertIn(f"aliases to {expected[3] / wl:.4g} ω_laser", warned[0])
        self.assertIn("Nyquist", warned[0])

    def test_direct_spectra_and_their_photon_number(self):
        with h5py.File(os.path.join(self.far, "spectrum.h5"), "r") as s:
            d = s["direct"]
            w = d["axes/omega"][...]
            dOmega = d["axes/solid_angle"][...]
            want = {}
            for name in ("coherent", "incoherent"):
                # N = Σ ΔΩ ∫ d²W/dωdΩ / (ħω) dω, from the energy density and ħ, not the file's photon units.
                dens = d[f"{name}/d2W_domega_dOmega"][...].reshape(len(dOmega), len(w)) / (HBAR_SI * w)
                per_dir = np.array([sum(0.5 * (r[i] + r[i + 1]) * (w[i + 1] - w[i]) for i in range(len(w) - 1))
                                    for r in dens])
                want[name] = float(per_dir @ dOmega)
        for png in ("direct_map.png", "direct_on_axis.png", "direct_vs_angle.png"):
            meta = self.png(png)
            for name, n in want.items():
                self.assertGreater(n, 0)
                self.assertAlmostEqual(float(meta[f"edm:total_photons_{name}"]) / n, 1.0, delta=1e-9,
                                       msg=f"{png}: {name}")
        map_omega = float(self.png("direct_map.png")["edm:map_omega_laser"])
        self.assertLess(abs(map_omega * 2354564459136066.5 - base_line(self.far)), (w[1] - w[0]))

    # Named to run last of the class (unittest sorts by name): it computes spectrum.h5 again.
    def test_options_that_differ_compute_the_spectrum_again(self):
        spec = os.path.join(self.far, "spectrum.h5")
        rc, out, err = edm(self.binary, "plot", self.far, "--window", "none", "--harmonics", "1",
                           "--direct-omega", "60")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("not --window none: computing it again", err)
        with h5py.File(spec, "r") as s:
            self.assertEqual(s.attrs["window"].decode(), "none")
            self.assertEqual(list(s["harmonics/order"][...]), [1])
            self.assertIn("direct", s)  # the run's /direct carried over
        self.assertAlmostEqual(float(self.png("direct_map.png")["edm:map_omega_laser"]), 60, delta=100 / 31)
        self.assertFalse(os.path.exists(os.path.join(self.far, "plots", "harmonic_2.png")))
        with open(spec, "rb") as fh:
            before = fh.read()
        rc, out, err = edm(self.binary, "plot", self.far, "--window", "none", "--harmonics", "1")
        self.assertEqual(rc, 0, out + err)
        self.assertNotIn("computing", err)
        with open(spec, "rb") as fh:
            self.assertEqual(fh.read(), before, "a spectrum.h5 of the same options was computed again")
        rc, out, err = edm(self.binary, "plot", self.far, "--of", "laser")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("not --of laser", err)
        with h5py.File(spec, "r") as s:
            self.assertEqual(s["harmonics"].attrs["of"].decode(), "laser")
        rc, out, err = edm(self.binary, "plot", self.far, "--direct-omega", "-1")
        self.assertEqual(rc, 2, out + err)
        self.assertIn("EDM-PLOT-005", err)


def base_line(run):
    with h5py.File(os.path.join(run, "spectrum.h5"), "r") as s:
        return float(s["harmonics"].attrs["base_omega"])


class FlatScreenAndKernelBuild(unittest.TestCase):
    binary = None

    def test_flat_screen_with_direct_spectra(self):
        with edm_testrun.Workspace("plot-flat") as ws:
            toml = ws.campaign("flat")
            with open(toml, "a") as fh:
                fh.write("[spectra]\nenabled = true\nomega_min = 10\nomega_max = 60\ncount = 16\n")
            run = os.path.join(ws.dir, "flat")
            # Both kernel caches off: the programs are compiled here, and the compiler's diagnostics
            # would reach stderr.
            env = dict(os.environ, POCL_KERNEL_CACHE="0", EDM_NO_KERNEL_CACHE="1")
            rc, out, err = edm(self.binary, "run", toml, "-q", "--output", run, env=env)
            self.assertEqual(rc, 0, out + err)
            self.assertNotIn("warning", err)
            self.assertEqual(err, "", "edm run -q printed on stderr")
            rc, out, err = edm(self.binary, "plot", run)
            self.assertEqual(rc, 0, out + err)
            self.assertEqual(foreign_lines(err), [], err)
            meta = png_text(os.path.join(run, "plots", "fluence.png"))
            self.assertEqual(meta["edm:axes"], "x (mm) | y (mm)")
            for name in ("direct_map.png", "direct_on_axis.png", "direct_vs_angle.png"):
                self.assertGreater(float(png_text(os.path.join(run, "plots", name))["edm:total_photons_coherent"]), 0)


if __name__ == "__main__":
    PlotsOfARun.binary = FlatScreenAndKernelBuild.binary = edm_testrun.edm_binary()
    unittest.main(argv=[sys.argv[0], "-v"])
