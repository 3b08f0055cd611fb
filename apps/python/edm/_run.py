"""A run folder from Python: the manifest and the products as arrays with axes and units, read
through libedm's io owners (RunManifest, FieldFile, SpectrumFile: the readers of `edm info` and
`edm spectrum`), so a damaged or foreign file raises the same EDM id as the command line."""
import os
import tomllib

import numpy as np

from . import _core

_UNITS = {"E": "V/m", "B": "T", "E_far": "V/m", "B_far": "T"}


def _xarray():
    try:
        import xarray
        return xarray
    except ImportError:
        return None


class Field:
    """One component of field.h5 (ny, nx, samples), read lazily: indexing reads only the rows it
    needs (a hyperslab), .data reads it whole. .axes holds y, x (m, or rad on an angular screen) and
    t (s); .unit is V/m for E, T for B (R·E in V at infinity)."""

    dims = ("y", "x", "t")

    def __init__(self, field_file, name):
        self._ff = field_file
        self.name = name
        g = field_file.geometry
        self.shape = (g["ny"], g["nx"], g["samples"])
        self.axes = {"y": np.asarray(g["y"]), "x": np.asarray(g["x"]), "t": np.asarray(g["t"])}
        bucket = name.split("/")[0]
        self.unit = "V" if (g["far_field"] and bucket.startswith("E")) else _UNITS.get(bucket, "")
        if g["far_field"] and bucket.startswith("B"):
            self.unit = "T·m"

    def __repr__(self):
        return f"<edm.Field {self.name} {self.shape} in {self.unit}>"

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        first, rest = key[0], key[1:]
        ny = self.shape[0]
        if isinstance(first, (int, np.integer)):
            iy = int(first) + (ny if first < 0 else 0)
            if not 0 <= iy < ny:
                raise IndexError(f"row {first} of {self.name} (ny = {ny})")
            rows = self._ff.read_rows(self.name, iy, iy + 1)[0]
            return rows[rest] if rest else rows
        if isinstance(first, slice):
            start, stop, step = first.indices(ny)
            lo, hi = (start, stop) if step > 0 else (stop + 1, start + 1)
            if hi <= lo:
                return np.empty((0,) + self.shape[1:])[(slice(None),) + rest]
            rows = self._ff.read_rows(self.name, lo, hi)
            return rows[(slice(start - lo, stop - lo if stop >= 0 else None, step),) + rest]
        return self.data[key]

    @property
    def data(self):
        """The whole component, (ny, nx, samples)."""
        return self._ff.read_rows(self.name, 0, self.shape[0])

    def __array__(self, dtype=None, copy=None):
        a = self.data
        return a.astype(dtype) if dtype is not None else a

    def to_xarray(self):
        """An xarray.DataArray with its axes and unit (xarray is optional: ImportError without it)."""
        xr = _xarray()
        if xr is None:
            raise ImportError("xarray is not installed (Debian: python3-xarray); use .data and .axes")
        return xr.DataArray(self.data, dims=self.dims, coords=self.axes, name=self.name,
                            attrs={"unit": self.unit})


class Run:
    """A run folder: .manifest (run.toml as a dict), field(name) (a lazy Field), .spectrum,
    .direct and .oam (spectrum.h5's parts as dicts of arrays), analyse() (what `edm spectrum` does)."""

    def __init__(self, folder, summary=None):
        self.folder = os.fspath(folder)
        self.summary = summary or {}
        # Refused here, with the EDM id edm info gives, when the folder is no run folder.
        self._manifest_text = _core.read_manifest(self.folder)
        self._field = None

    def __repr__(self):
        return f"<edm.Run {self.folder}>"

    @property
    def manifest(self):
        """run.toml as a dict (provenance, every effective setting, window verdicts, timing)."""
        return tomllib.loads(self._manifest_text)

    def _field_file(self):
        if self._field is None:
            self._field = _core.open_field(self.folder)
        return self._field

    def field(self, name):
        """A component of field.h5: "E/x", "B/z", "E_far/y", …"""
        return Field(self._field_file(), name.strip("/"))

    @property
    def field_geometry(self):
        """The screen and time grid of field.h5 (nx, ny, samples, t, x, y, dt, nyquist_omega, …)."""
        return dict(self._field_file().geometry)

    def _spectrum_part(self, part):
        return _core.read_spectrum(self.folder, part)

    @property
    def spectrum(self):
        """edm spectrum's part of spectrum.h5 (a dict: dataset path → array; "attrs" → root attributes)."""
        return self._spectrum_part("analysis")

    @property
    def direct(self):
        """The run's direct far-field spectra (/direct): ω, the coherent and incoherent d²W/dωdΩ and
        photons per 0.1 % BW, as a dict of arrays."""
        return self._spectrum_part("direct")

    @property
    def oam(self):
        """The twisted-light groups of spectrum.h5 (complex harmonic maps, rings, fitted ℓ)."""
        return {k: v for k, v in self.spectrum.items() if k.startswith(("oam/", "harmonic_field/", "observables/"))}

    def analyse(self, window="hann", harmonics=None, of="laser", band=0.5, gamma=0.0, a0=-1.0):
        """Computes spectrum.h5 as `edm spectrum` does (the same library call) and returns the
        printed headline as a dict."""
        return _core.analyse(self.folder, window, list(harmonics or []), of, float(band), float(gamma), float(a0))


def open_run(folder):
    """An existing run folder (refused with the EDM id `edm info` gives when it is none)."""
    return Run(folder)
