# ctest-label: e2e
"""openPMD particle input (trajectory.model = "openpmd", share/docs/ensembles.md) end to end.

The test writes, following the openPMD 1.1.0 standard's text (base standard, plus weighting,
macroWeighted and weightingPower of the ED-PIC extension), one particle species of two electrons
as a file-based series (data%T.h5) and as a group-based one (one file, /data/<n>/), with
non-trivial unitSI on every record, a positionOffset (some components constant, some datasets),
positions in nm, time in fs, momentum macro-weighted, the particles in a different order in every
iteration. It writes the same trajectories (in SI, with their weights) as an edm tracks file. The
runs of both series must reproduce the run of the tracks file (field.h5, every component).

Then the bad inputs: no particles, a missing record, inconsistent iterations (a weighting that
changes), a gap in a track, a varying time step, a wrong unitDimension, a file that is not
openPMD, a species that is not there — each refused naming the file and what is wrong, with the
exit code of its family, and no field.h5 left behind.

usage: python3 tests/python/test_openpmd_particles.py EDM_BINARY
"""
import math
import os
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edm_testrun  # noqa: E402

C = 299792458.0
M_E = 9.1093837015e-31
LAMBDA = 8e-7
T = LAMBDA / C                      # laser period, s
DT = T / 64                         # the series' step
STEPS = 24 * 64 + 1                 # 24 periods
DISTANCE = 0.05
# Run from the openPMD series vs run from the tracks file, relative L2 per field component: the
# same SI numbers up to the rounding of the unitSI products (positions in nm plus an offset, time in
# fs, momentum ×w/w), about 1e-16 relative in the inputs; the splines are linear in them.
OPENPMD_VS_TRACKS = 1e-12

# Two electrons: ids 7 and 3 (assembled by id: 3 first), weights 2 and 0.5.
IDS = np.array([7, 3], dtype=np.uint64)
WEIGHTS = np.array([2.0, 0.5])


def trajectory(k_electron, t):
    """An oscillation along x at the laser frequency (β_x ≤ 0.05) drifting along z, in SI."""
    om = 2 * math.pi / T
    amp = 0.05 * C / om
    ph = 0.9 * k_electron
    x = 1.0e-7 * k_electron + amp * np.sin(om * t + ph)
    y = -2.0e-7 * k_electron + 0.0 * t
    vz = 0.01 * C * (1 + k_electron)
    z = 3.0e-8 * k_electron + vz * t
    vx = amp * om * np.cos(om * t + ph)
    g = 1.0 / np.sqrt(1 - (vx ** 2 + vz ** 2) / C ** 2)
    return x, y, z, g * vx / C, 0.0 * t, g * vz / C


def times():
    return DT * np.arange(STEPS)


def write_tracks(path):
    t = times()
    with h5py.File(path, "w") as f:
        # edm's tracks: in index order, which is the id order (3, then 7)
        for index, k in enumerate(np.argsort(IDS)):
            g = f.create_group(f"/tracks/{index:06d}")
            cols = dict(zip(("x", "y", "z", "ux", "uy", "uz"), trajectory(k, t)))
            g["t"] = t
            for name, v in cols.items():
                g[name] = np.asarray(v, dtype=np.float64)
            g["w"] = WEIGHTS[k]


def set_root(f, encoding, fmt):
    f.attrs["openPMD"] = np.bytes_("1.1.0")
    f.attrs["openPMDextension"] = np.uint32(0)
    f.attrs["basePath"] = np.bytes_("/data/%T/")
    f.attrs["particlesPath"] = np.bytes_("particles/")
    f.attrs["iterationEncoding"] = np.bytes_(encoding)
    f.attrs["iterationFormat"] = np.bytes_(fmt)


def constant(group, name, value, n, unit_si):
    c = group.create_group(name)
    c.attrs["value"] = value
    c.attrs["shape"] = np.array([n], dtype=np.uint64)
    c.attrs["unitSI"] = unit_si


def write_iteration(f, step, n_iter, mutate=None, species="e", extra_species=False):
    """Iteration n_iter (sample `step` of every track) into file f, under /data/<n_iter>/."""
    it = f.create_group(f"/data/{n_iter}")
    it.attrs["time"] = step * DT / 1e-15   # fs
    it.attrs["dt"] = DT / 1e-15
    it.attrs["timeUnitSI"] = 1e-15
    order = [1, 0] if step % 2 else [0, 1]   # the particles in another order every other iteration
    t = step * DT
    vals = [trajectory(k, np.array([t])) for k in order]
    n = len(order)
    sp = it.create_group(f"particles/{species}")
    nm, offset_unit = 1e-9, 2.5e-9
    pos = sp.create_group("position")
    pos.attrs["unitDimension"] = np.array([1, 0, 0, 0, 0, 0, 0], dtype=np.float64)
    pos.attrs["timeOffset"] = 0.0
    off = sp.create_group("positionOffset")
    off.attrs["unitDimension"] = np.array([1, 0, 0, 0, 0, 0, 0], dtype=np.float64)
    off.attrs["timeOffset"] = 0.0
    offsets = {"x": 40.0, "z": -12.0}   # constant components, in units of 2.5 nm
    y_off = np.array([8.0 * (i + 1) for i in range(n)])  # a dataset component
    for c, comp in enumerate(("x", "y", "z")):
        si = np.array([v[c][0] for v in vals])
        o = offsets[comp] if comp in offsets else y_off
        if comp in offsets:
            constant(off, comp, offsets[comp], n, offset_unit)
        else:
            off[comp] = y_off
            off[comp].attrs["unitSI"] = offset_unit
        pos[comp] = (si - o * offset_unit) / nm
        pos[comp].attrs["unitSI"] = nm
    mom = sp.create_group("momentum")
    mom.attrs["unitDimension"] = np.array([1, 1, -1, 0, 0, 0, 0], dtype=np.float64)
    mom.attrs["timeOffset"] = 0.0
    mom.attrs["macroWeighted"] = np.uint32(1)
    mom.attrs["weightingPower"] = 1.0
    w = WEIGHTS[order]
    for c, comp in enumerate(("x", "y", "z")):
        u = np.array([v[3 + c][0] for v in vals])
        mom[comp] = u * w   # per macro-particle: w × one electron's, in units of m_e c
        mom[comp].attrs["unitSI"] = M_E * C
    sp["weighting"] = w
    sp["weighting"].attrs["unitSI"] = 1.0
    sp["weighting"].attrs["unitDimension"] = np.zeros(7)
    sp["weighting"].attrs["macroWeighted"] = np.uint32(1)
    sp["weighting"].attrs["weightingPower"] = 1.0
    sp["id"] = IDS[order]
    sp["id"].attrs["unitSI"] = 1.0
    sp["id"].attrs["unitDimension"] = np.zeros(7)
    if extra_species:
        ions = it.create_group("particles/ions")
        ions.create_group("position")
    if mutate:
        mutate(step, it, sp)


def write_file_based(folder, mutate=None):
    os.makedirs(folder, exist_ok=True)
    for step in range(STEPS):
        with h5py.File(os.path.join(folder, f"data{10 * step}.h5"), "w") as f:
            set_root(f, "fileBased", "data%T.h5")
            write_iteration(f, step, 10 * step, mutate)
    return os.path.join(folder, "data%T.h5")


def write_group_based(path, mutate=None, extra_species=True, root=None):
    with h5py.File(path, "w") as f:
        set_root(f, "groupBased", "/data/%T/")
        for step in range(STEPS):
            write_iteration(f, step, 5 * step, mutate, extra_species=extra_species)
        if root:
            root(f)
    return path


CAMPAIGN = """
[run]
scenario = "thomson"
mode = "split"
[laser]
wavelength = {lam}
[trajectory]
model = "{model}"
file = "{file}"
species = "{species}"
[screen]
distance = {dist}
half_width = 1e-4
nx = 4
ny = 3
samples = 128
samples_per_period = 32
window = "explicit"
t_start = {t_start}
[accumulator]
devices = "0"
"""


def fields(run):
    out = {}
    with h5py.File(os.path.join(run, "field.h5"), "r") as f:
        for b in ("E", "B", "E_far", "B_far"):
            for c in ("x", "y", "z"):
                out[f"{b}/{c}"] = f[f"/{b}/{c}"][...]
    return out


class OpenPmdParticles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.edm = edm_testrun.edm_binary()
        cls.ws = edm_testrun.Workspace("openpmd-particles").__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def campaign(self, name, model, file, species=""):
        path = os.path.join(self.ws.dir, name + ".toml")
        with open(path, "w") as fh:
            fh.write(CAMPAIGN.format(lam=LAMBDA, model=model, file=file, species=species, dist=DISTANCE,
                                     t_start=8 * T + DISTANCE / C))
        return path

    def run_ok(self, name, model, file, species=""):
        out = os.path.join(self.ws.dir, name)
        edm_testrun.run_edm(self.edm, "run", self.campaign(name, model, file, species), "--quiet", "--output", out)
        return out

    def run_bad(self, name, file, code, *says, species=""):
        out = os.path.join(self.ws.dir, name)
        p = edm_testrun.run_edm(self.edm, "run", self.campaign(name, "openpmd", file, species), "--quiet",
                                "--output", out, check=False)
        self.assertEqual(p.returncode, code, p.stdout)
        for s in says:
            self.assertIn(s, p.stdout)
        self.assertFalse(os.path.exists(os.path.join(out, "field.h5")), "no field.h5 after a refused input")
        self.assertFalse(os.path.exists(os.path.join(out, "field.h5.partial")))
        return p.stdout

    def test_series_reproduce_the_tracks_run(self):
        tracks = os.path.join(self.ws.dir, "tracks.h5")
        write_tracks(tracks)
        ref = fields(self.run_ok("from_tracks", "tracks", tracks))
        with h5py.File(os.path.join(self.ws.dir, "from_tracks", "field.h5"), "r") as f:
            self.assertGreater(float(np.abs(f["/E_far/x"][...]).max()), 0.0)
        with open(os.path.join(self.ws.dir, "from_tracks", "run.toml")) as fh:
            self.assertIn("total_weight = 2.5", fh.read())
        series = {
            "file_based": (write_file_based(os.path.join(self.ws.dir, "fb")), ""),
            "group_based": (write_group_based(os.path.join(self.ws.dir, "gb.h5")), "e"),
        }
        # A file-based series may also be named by any one of its files.
        series["file_based_one_file"] = (os.path.join(self.ws.dir, "fb", "data120.h5"), "")
        for name, (file, species) in series.items():
            got = fields(self.run_ok(name, "openpmd", file, species))
            for comp, r in ref.items():
                l2 = float(np.linalg.norm(got[comp] - r) / np.linalg.norm(r))
                self.assertLess(l2, OPENPMD_VS_TRACKS, f"{name} {comp}: rel L2 {l2}")

    def test_bad_series_are_refused(self):
        d = self.ws.dir

        def drop_particles(step, it, sp):
            if step == 3:
                del it["particles/e"]

        def drop_momentum(step, it, sp):
            if step == 2:
                del sp["momentum"]

        def weight_changes(step, it, sp):
            if step == 7:
                sp["weighting"][...] = sp["weighting"][...] * 1.5

        def gap(step, it, sp):
            if step == 5:  # particle 3 leaves iteration 5 only
                keep = sp["id"][...] != 3
                for rec in ("position", "positionOffset", "momentum"):
                    for c in ("x", "y", "z"):
                        obj = sp[rec][c]
                        if isinstance(obj, h5py.Dataset):
                            v = obj[...][keep]
                            a = dict(obj.attrs)
                            del sp[rec][c]
                            sp[rec][c] = v
                            sp[rec][c].attrs.update(a)
                        else:
                            obj.attrs["shape"] = np.array([1], dtype=np.uint64)
                for rec in ("weighting", "id"):
                    v = sp[rec][...][keep]
                    a = dict(sp[rec].attrs)
                    del sp[rec]
                    sp[rec] = v
                    sp[rec].attrs.update(a)

        def uneven(step, it, sp):
            if step == 9:
                it.attrs["time"] = it.attrs["time"] * 1.01

        def wrong_dimension(step, it, sp):
            sp["position"].attrs["unitDimension"] = np.array([0, 1, 0, 0, 0, 0, 0], dtype=np.float64)

        def not_openpmd(f):
            del f.attrs["openPMD"]

        cases = [
            ("no_particles", drop_particles, 4, ["EDM-IO-117", "/data/15", "no particle species"]),
            ("no_momentum", drop_momentum, 4, ["EDM-IO-119", "/data/10/particles/e/momentum is missing"]),
            ("weight_changes", weight_changes, 4, ["EDM-IO-122", "particle id", "weighting changes", "iteration 35"]),
            ("gap", gap, 4, ["EDM-IO-123", "particle id 3 has a gap", "iteration 20 and 30"]),
            ("uneven", uneven, 4, ["EDM-IO-124", "particle id 3", "time step varies"]),
            ("dimension", wrong_dimension, 4, ["EDM-IO-120", "/data/0/particles/e/position", "unitDimension"]),
        ]
        for name, mutate, code, says in cases:
            file = write_group_based(os.path.join(d, name + ".h5"), mutate, extra_species=False)
            self.run_bad(name, file, code, file, *says)
        bad_root = write_group_based(os.path.join(d, "not_openpmd.h5"), extra_species=False, root=not_openpmd)
        self.run_bad("not_openpmd", bad_root, 4, bad_root, "EDM-IO-115", "not an openPMD 1.x file")
        two = write_group_based(os.path.join(d, "two_species.h5"))
        self.run_bad("no_such_species", two, 2, "EDM-CFG-645", "trajectory.species", "ions", species="positrons")
        self.run_bad("several_species", two, 2, "EDM-CFG-646", "several species")
        empty_folder = os.path.join(d, "nothing")
        os.makedirs(empty_folder)
        self.run_bad("no_files", os.path.join(empty_folder, "data%T.h5"), 4, "EDM-IO-114", "no file of this openPMD series")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
