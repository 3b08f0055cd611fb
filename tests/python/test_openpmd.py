# ctest-label: e2e
"""field.h5 against the openPMD standard 1.1.0, checked from the standard's text (STANDARD.md of
openPMD/openPMD-standard at tag 1.1.0): every required and recommended attribute, with the type the
standard gives it ((string) = fixed-length ASCII, (uint32), (float64), (floatX), arrays of N or 7).
Also: the edm paths (/E/x, /axes, /gamma) name the same objects as the openPMD records, the mesh
attributes reproduce /axes, and spectrum.h5 and checkpoint.h5 say they are edm's own layout.
The checker is shown to fail on files broken in the ways the issue reported (attributes missing,
wrong types), so a pass means something.

usage: python3 tests/python/test_openpmd.py EDM_BINARY
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edm_testrun  # noqa: E402

h5t = h5py.h5t
RECORD_NAME = re.compile(r"^[A-Za-z0-9_]+$")  # the standard's naming rule (regex \w, ASCII)
DATE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{4}$")  # "YYYY-MM-DD HH:mm:ss tz"
GEOMETRIES = ("cartesian", "thetaMode", "other")  # cylindrical, spherical are reserved, not defined
MAX_ITERATION = 2**64 - 1  # %T: same range as a 64-bit unsigned integer


class OpenPMDChecker:
    """Collects every violation of openPMD 1.1.0 in one file (an empty list: the file passes)."""

    def __init__(self, path):
        self.path, self.errors = path, []

    def fail(self, where, msg):
        self.errors.append(f"{where}: {msg}")

    # --- attribute types -------------------------------------------------------------------------
    def _attr(self, obj, name, where, required=True):
        if name not in obj.attrs:
            if required:
                self.fail(where, f"missing attribute {name}")
            return None
        return h5py.h5a.open(obj.id, name.encode())

    def string(self, obj, name, where, required=True):
        """(string): fixed-length, plain ASCII, one value."""
        a = self._attr(obj, name, where, required)
        if a is None:
            return None
        t = a.get_type()
        if not isinstance(t, h5t.TypeStringID):
            self.fail(where, f"{name} must be a string, is {t.__class__.__name__}")
            return None
        if t.is_variable_str():
            self.fail(where, f"{name} must be a fixed-length string, is variable-length")
        if t.get_cset() != h5t.CSET_ASCII:
            self.fail(where, f"{name} must be ASCII")
        if a.shape != ():
            self.fail(where, f"{name} must be one string, has shape {a.shape}")
            return None
        v = obj.attrs[name]
        return v.decode("ascii", "replace") if isinstance(v, bytes) else str(v)

    def strings(self, obj, name, n, where):
        """1-dimensional array containing N (string) elements."""
        a = self._attr(obj, name, where)
        if a is None:
            return None
        t = a.get_type()
        if not isinstance(t, h5t.TypeStringID) or t.is_variable_str() or t.get_cset() != h5t.CSET_ASCII:
            self.fail(where, f"{name} must be an array of fixed-length ASCII strings")
            return None
        if a.shape != (n,):
            self.fail(where, f"{name} must be a 1-D array of {n} strings, has shape {a.shape}")
            return None
        return [x.decode("ascii", "replace") for x in obj.attrs[name]]

    def number(self, obj, name, where, kind, shape=(), required=True):
        """kind: 'float64' (float64 / REAL8), 'floatX' (any float), 'uint32'. shape () is one value."""
        a = self._attr(obj, name, where, required)
        if a is None:
            return None
        t = a.get_type()
        if kind in ("float64", "floatX"):
            ok = t.get_class() == h5t.FLOAT and (kind == "floatX" or t.get_size() == 8)
        else:
            ok = t.get_class() == h5t.INTEGER and t.get_size() == 4 and t.get_sign() == h5t.SGN_NONE
        if not ok:
            self.fail(where, f"{name} must be {kind}, is class {t.get_class()} of {t.get_size()} bytes")
        if a.shape != shape:
            self.fail(where, f"{name} must have shape {shape}, has {a.shape}")
            return None
        return obj.attrs[name]

    # --- the standard, section by section ---------------------------------------------------------
    def check(self):
        with h5py.File(self.path, "r") as f:
            base, meshes_path, iterations = self.root(f)
            for it in iterations:
                self.iteration(f, it, base, meshes_path)
            self.comments(f)
        return self.errors

    def root(self, f):
        w = "/"
        version = self.string(f, "openPMD", w)
        if version is not None and not re.fullmatch(r"\d+\.\d+\.\d+", version):
            self.fail(w, f"openPMD must be MAJOR.MINOR.REVISION, is {version!r}")
        if version is not None and version != "1.1.0":
            self.fail(w, f"openPMD is {version!r}, this check is for 1.1.0")
        self.number(f, "openPMDextension", w, "uint32")
        base = self.string(f, "basePath", w)
        if base is not None and base != "/data/%T/":
            self.fail(w, f"basePath is fixed to '/data/%T/' in 1.1.0, is {base!r}")
        meshes_path = self.string(f, "meshesPath", w, required=False)
        particles_path = self.string(f, "particlesPath", w, required=False)
        for name, rel in (("meshesPath", meshes_path), ("particlesPath", particles_path)):
            # "path relative from the basePath"; paths to groups end on "/".
            if rel is not None and (rel.startswith("/") or not rel.endswith("/")):
                self.fail(w, f"{name} must be a group path relative to basePath ('name/'), is {rel!r}")
        if meshes_path is None and particles_path is None:
            self.fail(w, "neither meshesPath nor particlesPath: the file claims no records")
        encoding = self.string(f, "iterationEncoding", w)
        if encoding is not None and encoding not in ("fileBased", "groupBased"):
            self.fail(w, f"iterationEncoding must be fileBased or groupBased, is {encoding!r}")
        fmt = self.string(f, "iterationFormat", w)
        if fmt is not None and "%T" not in fmt:
            self.fail(w, f"iterationFormat must contain %T, is {fmt!r}")
        if encoding == "groupBased" and fmt is not None and base is not None and fmt != base:
            self.fail(w, f"groupBased: iterationFormat {fmt!r} must equal basePath {base!r}")
        for name in ("author", "software", "softwareVersion", "date"):  # recommended
            v = self.string(f, name, w)
            if v is not None and not v.strip():
                self.fail(w, f"{name} is empty")
        date = f.attrs.get("date")
        if date is not None and not DATE.match(date.decode() if isinstance(date, bytes) else str(date)):
            self.fail(w, f"date must be 'YYYY-MM-DD HH:mm:ss tz', is {date!r}")
        for name in ("softwareDependencies", "machine"):  # optional, but typed
            self.string(f, name, w, required=False)
        iterations = []
        if base is not None and "data" in f:
            for name in f["data"]:
                if not name.isdigit() or int(name) > MAX_ITERATION:
                    self.fail("/data/", f"{name!r} is not an iteration (an unsigned 64-bit integer)")
                else:
                    iterations.append(name)
        if not iterations:
            self.fail(w, "no iteration under /data/")
        if particles_path is not None:
            for it in iterations:
                if f"/data/{it}/{particles_path}" not in f:
                    self.fail(w, f"particlesPath is set but /data/{it}/{particles_path} does not exist")
        return base, meshes_path, iterations

    def iteration(self, f, it, base, meshes_path):
        w = base.replace("%T", it) if base else f"/data/{it}/"
        g = f[w]
        self.number(g, "time", w, "floatX")
        self.number(g, "dt", w, "floatX")
        self.number(g, "timeUnitSI", w, "float64")
        if meshes_path is None:
            return
        mw = w + meshes_path
        if mw not in f or not isinstance(f[mw], h5py.Group):
            self.fail(w, f"meshesPath is set but the group {mw} does not exist")
            return
        for name, rec in f[mw].items():
            self.mesh_record(rec, mw + name, name)

    def mesh_record(self, rec, w, name):
        if not RECORD_NAME.match(name):
            self.fail(w, "a record name may hold only a-Z, 0-9 and _")
        if isinstance(rec, h5py.Dataset):
            components = {name: rec}
            ndim = rec.ndim
        else:
            components = dict(rec.items())
            if not components:
                self.fail(w, "a vector record group without components")
                return
            for c in components:
                if not RECORD_NAME.match(c):
                    self.fail(f"{w}/{c}", "a component name may hold only a-Z, 0-9 and _")
            shapes = {c.shape if isinstance(c, h5py.Dataset) else None for c in components.values()}
            if len(shapes) != 1:
                self.fail(w, f"components of one record differ in shape: {shapes}")
            datasets = [c for c in components.values() if isinstance(c, h5py.Dataset)]
            ndim = datasets[0].ndim if datasets else None
        geometry = self.string(rec, "geometry", w)
        if geometry is not None and geometry not in GEOMETRIES:
            self.fail(w, f"geometry {geometry!r} is not one of {GEOMETRIES}")
        if geometry == "thetaMode":
            self.string(rec, "geometryParameters", w)
        if geometry == "cartesian" and not isinstance(rec, h5py.Dataset):
            extra = set(components) - {"x", "y", "z"}
            if extra:
                self.fail(w, f"Cartesian vector components are x, y, z; found {sorted(extra)}")
        order = self.string(rec, "dataOrder", w, required=ndim != 1)
        if order is not None and order not in ("C", "F"):
            self.fail(w, f"dataOrder must be C or F, is {order!r}")
        if ndim is None:
            self.fail(w, "cannot tell the record's dimensionality (no data set component)")
            return
        self.strings(rec, "axisLabels", ndim, w)
        self.number(rec, "gridSpacing", w, "floatX", (ndim,))
        self.number(rec, "gridGlobalOffset", w, "float64", (ndim,))
        self.number(rec, "gridUnitSI", w, "float64")
        self.number(rec, "unitDimension", w, "float64", (7,))
        self.number(rec, "timeOffset", w, "floatX")
        for c, comp in components.items():
            cw = w if isinstance(rec, h5py.Dataset) else f"{w}/{c}"
            self.number(comp, "unitSI", cw, "float64")
            pos = self.number(comp, "position", cw, "floatX", (ndim,))
            if pos is not None and not np.all((pos >= 0.0) & (pos < 1.0)):
                self.fail(cw, f"position must lie in [0, 1), is {pos}")
            if isinstance(comp, h5py.Dataset) and comp.ndim != ndim:
                self.fail(cw, f"has {comp.ndim} dimensions, the record {ndim}")
            # Recommended: the unit as a human-readable string in the component's comment.
            unit = comp.attrs.get("unit")
            comment = self.string(comp, "comment", cw)
            if unit is not None and comment is not None:
                unit = unit.decode() if isinstance(unit, bytes) else str(unit)
                if unit and unit not in comment:
                    self.fail(cw, f"comment {comment!r} does not name the unit {unit!r}")

    def comments(self, f):
        """`comment`, wherever it is, is a (string)."""
        def visit(name, obj):
            if "comment" in obj.attrs:
                self.string(obj, "comment", "/" + name)
        f.visititems(visit)


def obj_addr(f, path):
    return h5py.h5o.get_info(f[path].id).addr


def attr_str(obj, name):
    v = obj.attrs[name]
    return v.decode() if isinstance(v, bytes) else str(v)


class FieldFileIsOpenPMD(unittest.TestCase):
    binary = None
    ws = None
    runs = {}

    @classmethod
    def setUpClass(cls):
        cls.ws = edm_testrun.Workspace("openpmd")
        for mode in ("total", "split"):
            cls.runs[mode] = edm_testrun.make_run(cls.binary, cls.ws, mode, mode=mode, spectrum=(mode == "total"))

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def field(self, mode):
        return os.path.join(self.runs[mode], "field.h5")

    def test_every_required_and_recommended_attribute(self):
        for mode in ("total", "split"):
            errors = OpenPMDChecker(self.field(mode)).check()
            self.assertEqual(errors, [], f"{mode} mode field.h5 violates openPMD 1.1.0:\n" + "\n".join(errors))

    def test_edm_values_of_the_openpmd_attributes(self):
        with h5py.File(self.field("split"), "r") as f:
            self.assertEqual(attr_str(f, "openPMD"), "1.1.0")
            self.assertEqual(int(f.attrs["openPMDextension"]), 0)
            self.assertEqual(attr_str(f, "meshesPath"), "meshes/")
            self.assertEqual(attr_str(f, "iterationEncoding"), "groupBased")
            self.assertEqual(attr_str(f, "software"), "edm")
            self.assertEqual(attr_str(f, "softwareVersion"), attr_str(f, "edm_version"))
            self.assertTrue(attr_str(f, "edm_layout").startswith("openPMD 1.1.0"))
            self.assertEqual(list(f["data"]), ["0"])
            it = f["/data/0"]
            self.assertEqual(float(it.attrs["time"]), 0.0)
            self.assertEqual(float(it.attrs["timeUnitSI"]), 1.0)
            self.assertEqual(sorted(f["/data/0/meshes"]), ["B", "B_far", "E", "E_far"])
            dims = {"E": [1, 1, -3, -1, 0, 0, 0], "B": [0, 1, -2, -1, 0, 0, 0]}  # the standard's examples
            for rec in ("E", "B", "E_far", "B_far"):
                g = f[f"/data/0/meshes/{rec}"]
                self.assertEqual(list(g.attrs["unitDimension"]), dims[rec[0]], rec)
                self.assertEqual([x.decode() for x in g.attrs["axisLabels"]], ["y", "x", "t"])
                self.assertEqual(attr_str(g, "geometry"), "cartesian")
                self.assertEqual(attr_str(g, "dataOrder"), "C")
                self.assertEqual(float(g.attrs["gridUnitSI"]), 1.0)
                self.assertEqual(float(g.attrs["timeOffset"]), 0.0)
                self.assertEqual(float(g.attrs["gridSpacing"][2]), float(it.attrs["dt"]))
                for c in "xyz":
                    self.assertEqual(float(g[c].attrs["unitSI"]), 1.0)
                    self.assertEqual(list(g[c].attrs["position"]), [0.0, 0.0, 0.0])

    def test_mesh_grid_reproduces_the_axes(self):
        with h5py.File(self.field("total"), "r") as f:
            g = f["/data/0/meshes/E"]
            off, step, unit = g.attrs["gridGlobalOffset"], g.attrs["gridSpacing"], float(g.attrs["gridUnitSI"])
            shape = f["/E/x"].shape
            for i, label in enumerate(("y", "x", "t")):
                axis = f[f"/axes/{label}"][...]
                self.assertEqual(axis.size, shape[i])
                grid = (off[i] + (np.arange(shape[i]) + g["x"].attrs["position"][i]) * step[i]) * unit
                np.testing.assert_allclose(grid, axis, rtol=1e-12, atol=1e-12 * abs(step[i]), err_msg=label)

    def test_edm_paths_are_hard_links_to_the_records(self):
        with h5py.File(self.field("split"), "r") as f:
            for rec in ("E", "B", "E_far", "B_far"):
                self.assertIsInstance(f.get(f"/{rec}", getlink=True), h5py.HardLink)
                self.assertIsInstance(f["/data/0/meshes"].get(rec, getlink=True), h5py.HardLink)
                self.assertEqual(obj_addr(f, f"/{rec}"), obj_addr(f, f"/data/0/meshes/{rec}"))
                for c in "xyz":
                    self.assertEqual(obj_addr(f, f"/{rec}/{c}"), obj_addr(f, f"/data/0/meshes/{rec}/{c}"))
                    self.assertEqual(f[f"/{rec}/{c}"].shape, f["/data/0/meshes"][rec][c].shape)
                    np.testing.assert_array_equal(f[f"/{rec}/{c}"][...], f[f"/data/0/meshes/{rec}/{c}"][...])
            for path in ("/axes/x", "/axes/y", "/axes/t", "/gamma/mean", "/gamma/tau"):
                self.assertIn(path, f)
            self.assertTrue(np.any(f["/E/x"][...] != 0))

    def test_spectrum_says_it_is_edm_layout(self):
        with h5py.File(os.path.join(self.runs["total"], "spectrum.h5"), "r") as s:
            self.assertTrue(attr_str(s, "edm_layout").startswith("edm "), attr_str(s, "edm_layout"))
            self.assertIn("not openPMD", attr_str(s, "edm_layout"))
            self.assertNotIn("openPMD", s.attrs)

    def test_checkpoint_says_it_is_edm_layout(self):
        out = os.path.join(self.ws.dir, "ckpt")
        campaign = self.ws.campaign("ckpt", count=64, batch=1)
        p = subprocess.Popen([self.binary, "run", campaign, "--quiet", "--output", out, "--checkpoint-every", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ckpt = os.path.join(out, "checkpoint.h5")
        deadline = time.monotonic() + 120
        while not os.path.exists(ckpt) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        p.send_signal(signal.SIGKILL)
        p.wait()
        self.assertEqual(p.returncode, -signal.SIGKILL, "the run ended before its first checkpoint could be read")
        with h5py.File(ckpt, "r") as c:
            self.assertTrue(attr_str(c, "edm_layout").startswith("edm "), attr_str(c, "edm_layout"))
            self.assertIn("not openPMD", attr_str(c, "edm_layout"))
            self.assertNotIn("openPMD", c.attrs)


class CheckerCatchesBrokenFiles(unittest.TestCase):
    """The same checker on copies of a good field.h5, each broken in one way the standard forbids."""

    @classmethod
    def setUpClass(cls):
        cls.ws = edm_testrun.Workspace("openpmd-broken")
        cls.good = os.path.join(edm_testrun.make_run(FieldFileIsOpenPMD.binary, cls.ws, "good"), "field.h5")

    @classmethod
    def tearDownClass(cls):
        cls.ws.__exit__(None, None, None)

    def broken(self, name, mutate):
        path = os.path.join(self.ws.dir, name + ".h5")
        shutil.copy(self.good, path)
        with h5py.File(path, "r+") as f:
            mutate(f)
        return OpenPMDChecker(path).check()

    def expect(self, name, mutate, fragment):
        errors = self.broken(name, mutate)
        self.assertTrue(any(fragment in e for e in errors), f"{name}: expected {fragment!r} in {errors}")

    def test_good_file_passes(self):
        self.assertEqual(OpenPMDChecker(self.good).check(), [])

    def test_missing_root_attributes(self):
        for name in ("basePath", "iterationEncoding", "iterationFormat", "openPMDextension", "author", "software",
                     "softwareVersion", "date", "openPMD"):
            self.expect("no_" + name, lambda f, n=name: f.attrs.__delitem__(n), f"missing attribute {name}")

    def test_missing_iteration_and_record_attributes(self):
        self.expect("no_time", lambda f: f["/data/0"].attrs.__delitem__("time"), "missing attribute time")
        self.expect("no_timeUnitSI", lambda f: f["/data/0"].attrs.__delitem__("timeUnitSI"), "timeUnitSI")
        for name in ("geometry", "axisLabels", "gridSpacing", "gridGlobalOffset", "gridUnitSI", "unitDimension",
                     "timeOffset", "dataOrder"):
            self.expect("no_" + name, lambda f, n=name: f["/data/0/meshes/B"].attrs.__delitem__(n),
                        f"missing attribute {name}")
        for name in ("unitSI", "position"):
            self.expect("no_" + name, lambda f, n=name: f["/data/0/meshes/E/y"].attrs.__delitem__(n),
                        f"missing attribute {name}")

    def test_data_outside_an_iteration(self):
        def move(f):
            del f["/data"]
        self.expect("no_data", move, "no iteration under /data/")
        self.expect("meshes_elsewhere", lambda f: f.attrs.__setitem__("meshesPath", np.bytes_("fields/")),
                    "does not exist")

    def test_wrong_types(self):
        self.expect("labels_one_string", lambda f: f["/data/0/meshes/E"].attrs.__setitem__(
            "axisLabels", np.bytes_("y,x,t")), "axisLabels must be a 1-D array of 3 strings")
        self.expect("dim_6", lambda f: f["/data/0/meshes/E"].attrs.__setitem__(
            "unitDimension", np.zeros(6)), "unitDimension must have shape (7,)")
        self.expect("dim_f32", lambda f: f["/data/0/meshes/E"].attrs.__setitem__(
            "unitDimension", np.zeros(7, np.float32)), "unitDimension must be float64")
        self.expect("ext_float", lambda f: f.attrs.__setitem__("openPMDextension", 0.0),
                    "openPMDextension must be uint32")
        self.expect("ext_i64", lambda f: f.attrs.__setitem__("openPMDextension", np.int64(0)),
                    "openPMDextension must be uint32")
        self.expect("vlen_software", lambda f: f.attrs.__setitem__("software", "edm"),
                    "software must be a fixed-length string")
        self.expect("unitSI_array", lambda f: f["/data/0/meshes/E/x"].attrs.__setitem__(
            "unitSI", np.ones(3)), "unitSI must have shape ()")
        self.expect("position_out", lambda f: f["/data/0/meshes/E/x"].attrs.__setitem__(
            "position", np.array([0.0, 1.0, 0.0])), "position must lie in [0, 1)")
        self.expect("old_meshes_path", lambda f: f.attrs.__setitem__("meshesPath", np.bytes_("/")),
                    "meshesPath must be a group path relative to basePath")
        self.expect("bad_date", lambda f: f.attrs.__setitem__("date", np.bytes_("2024-01-01T00:00:00Z")),
                    "date must be")
        self.expect("bad_geometry", lambda f: f["/data/0/meshes/E"].attrs.__setitem__(
            "geometry", np.bytes_("screen")), "geometry 'screen'")
        self.expect("bad_iteration", lambda f: f["/data"].create_group("last"), "is not an iteration")


if __name__ == "__main__":
    FieldFileIsOpenPMD.binary = edm_testrun.edm_binary()
    unittest.main(argv=[sys.argv[0], "-v"])
