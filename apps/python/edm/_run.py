"""A run folder from Python: the manifest and the products as arrays with axes and units, read
through libedm's io owners (the same readers as `edm info` and `edm spectrum`)."""
import os

from . import _core


class Run:
    """A run folder. .manifest is run.toml as a dict; field(name) a component of field.h5."""

    def __init__(self, folder, summary=None):
        self.folder = os.fspath(folder)
        self.summary = summary or {}

    def __repr__(self):
        return f"<edm.Run {self.folder}>"


def open_run(folder):
    """An existing run folder (refused with the EDM id `edm info` gives when it is none)."""
    return Run(folder)
