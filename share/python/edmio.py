"""edmio: read edm's outputs from Python in one line (numpy and h5py only).

    import edmio
    run = edmio.load_run("runs/quickstart")        # manifest, axes, attributes, γ(τ); fields on demand
    Ex = run.field("E/x")                          # Ex.data[iy, ix, k] in V/m, Ex.axes["t"] in s
    trace = run.field("E/x", iy=16, ix=16)         # one pixel: only that hyperslab is read
    run.manifest["laser"]["omega"]                 # run.toml as a dict
    spec = run.spectrum                            # spectrum.h5 of the folder (None until `edm spectrum`)
    cells = edmio.load_campaign("OUTPUT")          # OUTPUT/campaign.toml: one row per cell

The layouts are described in share/docs/outputs.md (field.h5, run.toml, spectrum.h5 and the campaign
table). Every file is read through its documented paths (/E/x, /axes/t, …), so files written before
field.h5 became openPMD load the same way. Errors are EdmioError (a ValueError; EdmioFileError, also an
OSError, for a file that is missing or cannot be opened; EdmioIndexError, also an IndexError, for an
index outside an axis), each naming the file, the dataset and what is wrong.
"""
import math
import os

import h5py
import numpy as np

try:
    import tomllib  # Python ≥ 3.11
except ModuleNotFoundError:  # older interpreters: the tomli backport if present, else no TOML
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        tomllib = None

__all__ = ["EdmioError", "EdmioFileError", "EdmioIndexError", "EdmReadError", "Field", "Run", "Spectrum", "Campaign",
           "Cell", "load_run", "load_spectrum", "load_campaign", "load_manifest", "CELL_STATES"]

FIELD_RECORDS = ("E", "B", "E_far", "B_far")
COMPONENTS = ("x", "y", "z")
AXIS_LABELS = ("y", "x", "t")
AXIS_UNITS = {"y": "m", "x": "m", "t": "s"}
CELL_STATES = ("pending", "running", "done", "failed")


class EdmioError(ValueError):
    """A file does not have the layout share/docs/outputs.md describes, or a request does not fit it.
    The message names the file (and the dataset) and what is wrong."""


class EdmioFileError(EdmioError, OSError):
    """A file or run folder is missing or cannot be opened (also an OSError)."""


class EdmioIndexError(EdmioError, IndexError):
    """An index outside a dataset's axis (also an IndexError, as numpy raises)."""


# The name before EdmioError: `except edmio.EdmReadError` keeps catching every edmio error.
EdmReadError = EdmioError


def _value(v):
    """HDF5 attribute → plain Python: str for strings, float/int for scalars, numpy arrays otherwise."""
    if isinstance(v, bytes):
        return v.decode("ascii", "replace")
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "S":
            return [x.decode("ascii", "replace") for x in v.ravel()]
        if v.shape == ():
            return v.item()
        return v
    if isinstance(v, np.generic):
        return v.item()
    return v


def _attrs(obj):
    return {k: _value(v) for k, v in obj.attrs.items()}


def _open(path, what):
    if not os.path.exists(path):
        raise EdmioFileError(f"{path}: no such file ({what})")
    try:
        return h5py.File(path, "r")
    except OSError as e:
        raise EdmioFileError(f"{path}: cannot open ({what}): {e}") from None


def _load_toml(path, what):
    if tomllib is None:
        raise EdmioError(f"{path}: reading TOML needs Python ≥ 3.11 (tomllib) or the tomli package")
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise EdmioFileError(f"{path}: no such file ({what})") from None
    except tomllib.TOMLDecodeError as e:
        raise EdmioError(f"{path}: not valid TOML: {e}") from None


def load_manifest(path):
    """run.toml (a file or a run folder) as a dict."""
    if os.path.isdir(path):
        path = os.path.join(path, "run.toml")
    return _load_toml(path, "the run's manifest")


class Field:
    """One field component with its axes. data has the axes of `labels` in that order (a subset of
    (y, x, t) when a pixel or a sample was selected); axes[label] are the coordinates (m, m, s) and
    coords holds the coordinate of every axis that an integer index removed."""

    def __init__(self, name, data, unit, labels, axes, coords):
        self.name, self.data, self.unit = name, data, unit
        self.labels, self.axes, self.coords = tuple(labels), axes, coords
        self.axis_units = {k: AXIS_UNITS[k] for k in self.labels}

    def __repr__(self):
        return f"Field({self.name!r}, shape={self.data.shape}, unit={self.unit!r}, labels={self.labels})"


class Dataset:
    """A dataset of a file read lazily: d[sel] opens the file, reads only that selection, closes it."""

    def __init__(self, filename, path):
        self.filename, self.path = filename, path
        with h5py.File(filename, "r") as f:
            d = f[path]
            self.shape, self.dtype, self.attrs = d.shape, d.dtype, _attrs(d)
        self.size = int(np.prod(self.shape)) if self.shape else 1

    def __getitem__(self, sel):
        with h5py.File(self.filename, "r") as f:
            try:
                return f[self.path][sel]
            except IndexError as e:  # h5py's message names neither the file nor the dataset
                raise EdmioIndexError(f"{self.filename}: {self.path} {self.shape}: {sel!r}: {e}") from None

    def __repr__(self):
        return f"Dataset({self.path!r}, shape={self.shape})"


class Run:
    """A run folder: run.toml, field.h5 and (once `edm spectrum` ran) spectrum.h5.

    manifest   run.toml as a dict ({} if the folder has none)
    attrs      field.h5 root attributes (edm_version, run_id, scenario, mode, screen_z, openPMD, …)
    axes       {"x": (nx,) m, "y": (ny,) m, "t": (samples,) s}
    components the field components present, e.g. ["E/x", …, "B/z"] (+ E_far/*, B_far/* in split mode)
    gamma      the γ(τ) trace, {"tau", "mean", "min", "max", "count", "drain_electron", "drain"} → arrays
    spectrum   Spectrum of RUN/spectrum.h5, or None
    run["/E/x"][iy, ix, :] reads a hyperslab by its field.h5 path; "/E_far/x" in run tests for one.
    """

    def __init__(self, folder):
        if not os.path.isdir(folder):
            raise EdmioFileError(f"{folder}: no such run folder")
        self.folder = folder
        self.filename = os.path.join(folder, "field.h5")
        manifest = os.path.join(folder, "run.toml")
        self.manifest = load_manifest(manifest) if os.path.exists(manifest) else {}
        with _open(self.filename, "the run's field") as f:
            self.attrs = _attrs(f)
            for a in ("x", "y", "t"):
                if f"/axes/{a}" not in f:
                    raise EdmioError(f"{self.filename} has no /axes/{a}")
            self.axes = {a: f[f"/axes/{a}"][...] for a in ("x", "y", "t")}
            self.components = [f"{r}/{c}" for r in FIELD_RECORDS for c in COMPONENTS if f"/{r}/{c}" in f]
            self._units = {n: _value(f[n].attrs.get("unit", b"")) for n in self.components}
            self.gamma = {k: f["gamma"][k][...] for k in f["gamma"]} if "gamma" in f else {}
        if not self.components:
            raise EdmioError(f"{self.filename} has no field component (/E/x …)")
        spec = os.path.join(folder, "spectrum.h5")
        self._spectrum_path = spec if os.path.exists(spec) else None
        self._spectrum = None

    @property
    def spectrum(self):
        if self._spectrum is None and self._spectrum_path:
            self._spectrum = load_spectrum(self._spectrum_path)
        return self._spectrum

    def field(self, name, iy=None, ix=None, it=None):
        """The component `name` ("E/x", "B_far/z", …). iy, ix, it select along y, x, t: None keeps
        the whole axis, a slice keeps part of it, an integer removes it (its coordinate goes into
        coords). Only the selection is read from the file."""
        name = name.strip("/")
        if name not in self.components:
            raise EdmioError(f"{self.filename} has no {name} (it has {', '.join(self.components)})")
        sel, labels, axes, coords = [], [], {}, {}
        for label, arg, s in zip(AXIS_LABELS, ("iy", "ix", "it"), (iy, ix, it)):
            s = slice(None) if s is None else s
            if isinstance(s, slice):
                labels.append(label)
                axes[label] = self.axes[label][s]
            else:
                s = self._index(name, arg, label, s)
                coords[label] = float(self.axes[label][s])
            sel.append(s)
        with h5py.File(self.filename, "r") as f:
            data = f[name][tuple(sel)]
        return Field(name, data, self._units[name], labels, axes, coords)

    def _index(self, name, arg, label, i):
        """An integer index along one axis, negative ones counted from the end as numpy does; one
        outside the axis is an EdmioIndexError naming the file, the dataset and the valid range
        (h5py and numpy raised a bare IndexError that named neither)."""
        n = len(self.axes[label])
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise EdmioError(f"{self.filename}: /{name}: {arg}={i!r} is neither an integer nor a slice")
        if not -n <= i < n:
            raise EdmioIndexError(f"{self.filename}: /{name}: {arg}={i} is outside its {label} axis "
                                  f"({n} points: 0 … {n - 1}, or −{n} … −1 from the end)")
        return int(i) % n

    def __contains__(self, path):
        with h5py.File(self.filename, "r") as f:
            return path in f

    def __getitem__(self, path):
        if path not in self:
            raise EdmioError(f"{self.filename} has no {path}")
        return Dataset(self.filename, path)

    # `with edmio.load_run(...) as run:` reads like the h5py.File it replaces; nothing stays open.
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"Run({self.folder!r}, components={self.components})"


class Spectrum:
    """spectrum.h5 read whole (it is small): s["/axes/omega"] → array, "/harmonics/maps" in s,
    s.attrs (root attributes), s.attrs_of("/on_axis") (a group's or dataset's attributes),
    s.units["/pixel/fluence"] → "J/m^2". Properties name the documented datasets."""

    def __init__(self, path):
        self.filename = path
        self.data, self.units, self._attrs_of = {}, {}, {}
        with _open(path, "a spectrum, written by `edm spectrum RUN`") as f:
            self.attrs = _attrs(f)

            def visit(name, obj):
                p = "/" + name
                self._attrs_of[p] = _attrs(obj)
                if isinstance(obj, h5py.Dataset):
                    self.data[p] = obj[...]
                    self.units[p] = self._attrs_of[p].get("unit", "")

            f.visititems(visit)
        if "/axes/omega" not in self.data:
            raise EdmioError(f"{path} has no /axes/omega (not an edm spectrum.h5?)")

    def __contains__(self, path):
        return path in self.data

    def __getitem__(self, path):
        try:
            return self.data[path]
        except KeyError:
            raise EdmioError(f"{self.filename} has no dataset {path}") from None

    def attrs_of(self, path):
        return self._attrs_of.get(path, {})

    omega = property(lambda s: s["/axes/omega"])
    on_axis = property(lambda s: s["/on_axis/d2I_domega_dOmega"])
    integrated = property(lambda s: s["/integrated/dI_domega"])
    fluence = property(lambda s: s["/pixel/fluence"])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"Spectrum({self.filename!r}, {len(self.data)} datasets)"


def load_run(folder):
    """A run folder (field.h5, run.toml, spectrum.h5 when present)."""
    return Run(folder)


def load_spectrum(path):
    """spectrum.h5, or the spectrum.h5 of a run folder."""
    if os.path.isdir(path):
        path = os.path.join(path, "spectrum.h5")
    return Spectrum(path)


class Cell:
    """One row of a campaign table."""

    def __init__(self, label, state, overrides, results, wall_s, error):
        self.label, self.state, self.overrides = label, state, overrides
        self.results, self.wall_s, self.error = results, wall_s, error

    def get(self, column):
        """label, state, wall_s, error, overrides.<key> or results.<key>; None when absent."""
        head, _, key = column.partition(".")
        if head in ("overrides", "results") and key:
            return getattr(self, head).get(key)
        if head in ("label", "state", "wall_s", "error") and not key:
            return getattr(self, head)
        raise EdmioError(f"no column {column!r} (label, state, wall_s, error, overrides.KEY, results.KEY)")

    def __repr__(self):
        return f"Cell({self.label!r}, {self.state})"


class Campaign:
    """A campaign table: cells (one Cell per row, in file order), meta (the optional [campaign] table)."""

    def __init__(self, path, meta, cells):
        self.filename, self.meta, self.cells = path, meta, cells

    def __len__(self):
        return len(self.cells)

    def __iter__(self):
        return iter(self.cells)

    def __getitem__(self, label):
        for c in self.cells:
            if c.label == label:
                return c
        raise EdmioError(f"{self.filename} has no cell {label!r}")

    def column(self, name, state=None):
        """One column as a numpy array over the cells (of one state, if given): float with NaN for a
        missing number, object for strings."""
        rows = [c.get(name) for c in self.cells if state is None or c.state == state]
        if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in rows):
            return np.array([math.nan if v is None else float(v) for v in rows])
        return np.array(rows, dtype=object)


def _campaign_error(path, i, msg):
    return EdmioError(f"{path}: cell {i + 1}: {msg}")


def _read_cell(path, i, row):
    if not isinstance(row, dict):
        raise _campaign_error(path, i, "not a table")
    unknown = set(row) - {"label", "state", "overrides", "results", "wall_s", "error"}
    if unknown:
        raise _campaign_error(path, i, f"unknown key(s) {', '.join(sorted(unknown))}")
    label = row.get("label")
    if not isinstance(label, str) or not label:
        raise _campaign_error(path, i, "label must be a non-empty string")
    state = row.get("state")
    if state not in CELL_STATES:
        raise _campaign_error(path, i, f"{label}: state {state!r} is not one of {', '.join(CELL_STATES)}")
    overrides, results = row.get("overrides", {}), row.get("results", {})
    for key, v in (("overrides", overrides), ("results", results)):
        if not isinstance(v, dict):
            raise _campaign_error(path, i, f"{label}: {key} must be a table")
    wall = row.get("wall_s")
    if wall is not None and (isinstance(wall, bool) or not isinstance(wall, (int, float)) or wall < 0):
        raise _campaign_error(path, i, f"{label}: wall_s must be a number of seconds ≥ 0")
    error = row.get("error")
    if error is not None and not isinstance(error, str):
        raise _campaign_error(path, i, f"{label}: error must be a string (the error id and message)")
    return Cell(label, state, dict(overrides), dict(results), None if wall is None else float(wall), error)


def load_campaign(path):
    """A campaign table: OUTPUT/campaign.toml (or the file itself), format in share/docs/outputs.md."""
    if os.path.isdir(path):
        path = os.path.join(path, "campaign.toml")
    doc = _load_toml(path, "a campaign table")
    unknown = set(doc) - {"campaign", "cell"}
    if unknown:
        raise EdmioError(f"{path}: unknown table(s) {', '.join(sorted(unknown))} (expected [campaign], [[cell]])")
    rows = doc.get("cell", [])
    if not isinstance(rows, list):
        raise EdmioError(f"{path}: cell must be an array of tables ([[cell]])")
    # The verdicts of each run (share/docs/outputs.md, the campaign table): taken off the row before
    # _read_cell checks it, then set on the Cell as suspect (the reasons; state "done (suspect)"),
    # warnings (their text) and verdicts (roots_converged, burst_in_window, covered).
    extra = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            continue
        row = dict(row)
        x = {k: row.pop(k) for k in ("suspect", "warnings", "verdicts") if k in row}
        for k in ("suspect", "warnings"):
            if not (isinstance(x.get(k, []), list) and all(isinstance(v, str) for v in x.get(k, []))):
                raise _campaign_error(path, i, f"{k} must be a list of strings")
        if not (isinstance(x.get("verdicts", {}), dict) and all(isinstance(v, bool) for v in x.get("verdicts", {}).values())):
            raise _campaign_error(path, i, "verdicts must be a table of true/false")
        x["word"] = row.get("state")
        if row.get("state") == "done (suspect)":
            row["state"] = "done"
        rows[i] = row
        extra.append(x)
    cells = [_read_cell(path, i, row) for i, row in enumerate(rows)]
    for c, x in zip(cells, extra):
        c.state = x["word"]
        c.suspect, c.warnings, c.verdicts = list(x.get("suspect", [])), list(x.get("warnings", [])), dict(x.get("verdicts", {}))
        if c.state == "done (suspect)" and not c.suspect:
            c.suspect = ["recorded suspect without a reason"]
    seen = set()
    for c in cells:
        if c.label in seen:
            raise EdmioError(f"{path}: two cells are labelled {c.label!r}")
        seen.add(c.label)
    meta = doc.get("campaign", {})
    if not isinstance(meta, dict):
        raise EdmioError(f"{path}: [campaign] must be a table")
    return Campaign(path, meta, cells)
