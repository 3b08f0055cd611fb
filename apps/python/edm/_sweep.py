"""A campaign of cells from Python: the table `edm sweep` writes (OUTPUT/campaign.toml merged with
each cell's state file, read by libedm as `edm campaign status` reads it) as columns by header
name, and each done cell's run folder as an edm.Run."""
import math
import os

import numpy as np

from . import _core
from ._run import Run


class Sweep:
    """A campaign folder: .rows (one dict per cell, in the order of the expansion), .labels,
    column(name) by the table's header names (label, state, wall_s, error, suspect, warnings,
    overrides.KEY, results.NAME, verdicts.NAME), .failed and .suspect (labels), run(label)."""

    def __init__(self, folder, labels=None, read=True):
        self.folder = os.fspath(folder)
        self._labels = list(labels) if labels is not None else None
        self._rows = None
        if read:
            self.refresh()

    def refresh(self):
        """Reads the table again (it changes while cells run elsewhere)."""
        self._rows = _core.read_table(self.folder)
        return self

    @property
    def rows(self):
        if self._rows is None:
            self.refresh()
        return self._rows

    @property
    def labels(self):
        return [r["label"] for r in self.rows]

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        return f"<edm.Sweep {self.folder}: {len(self)} cells>"

    def row(self, label):
        for r in self.rows:
            if r["label"] == label:
                return r
        raise KeyError(f"{self.folder} has no cell {label!r} (cells: {', '.join(self.labels)})")

    def _value(self, r, name):
        head, _, key = name.partition(".")
        if head in ("overrides", "results", "verdicts") and key:
            v = r[head].get(key)
            if head == "overrides" and v is not None:
                try:
                    import tomllib
                    return tomllib.loads("v = " + v)["v"]
                except ValueError:
                    return v
            return v
        if name == "suspect":
            return bool(r["suspect"])
        if name in ("label", "state", "wall_s", "error", "warnings", "host"):
            return r[name]
        raise KeyError(f"no column {name!r} (label, state, wall_s, error, suspect, warnings, overrides.KEY, "
                       "results.NAME, verdicts.NAME)")

    def column(self, name):
        """One column over the cells: float (NaN where absent) for numbers, else an object array."""
        vals = [self._value(r, name) for r in self.rows]
        if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in vals):
            return np.array([math.nan if v is None else float(v) for v in vals])
        return np.array(vals, dtype=object)

    @property
    def columns(self):
        """Every header name of the table, as column() takes it."""
        names = ["label", "state", "wall_s", "error", "suspect", "warnings"]
        for head in ("overrides", "results", "verdicts"):
            keys = sorted({k for r in self.rows for k in r[head]})
            names += [f"{head}.{k}" for k in keys]
        return names

    @property
    def failed(self):
        return [r["label"] for r in self.rows if r["state"] == "failed"]

    @property
    def suspect(self):
        """The done cells whose run says their field is wrong (done (suspect); reasons in row(label))."""
        return [r["label"] for r in self.rows if r["suspect"]]

    def run(self, label):
        """The cell's run folder as an edm.Run (refused with edm info's EDM id when it holds none)."""
        self.row(label)
        return Run(os.path.join(self.folder, label))


def open_sweep(folder):
    """An existing campaign folder (EDM-SWP-011 when it holds no campaign table)."""
    return Sweep(folder)
