"""edm from Python: set up, launch, follow and analyse runs (share/docs/python.md).

The same engine as the `edm` command (libedm through edm._core): a campaign is read and validated
by the same key table, a run writes the same run folder, and a bad key raises the same EDM id the
command line prints. Example::

    import edm
    r = edm.run("share/campaigns/quickstart.toml", output="runs/q")
    Ex = r.field("E/x")          # numpy array (ny, nx, samples) in V/m, with .axes and .unit
"""
import json
import math
import os
import sys
import tomllib

from . import _core

__all__ = ["Campaign", "Run", "Sweep", "run", "resume", "sweep", "devices", "plugins", "schema", "open_run",
           "open_sweep", "Error", "ConfigError", "DeviceError", "IoError", "PluginError", "PhysicsError",
           "CellsFailed", "Interrupted"]


class Error(Exception):
    """An edm error: .id is its stable EDM id (`edm explain ID`), .exit_code what `edm` would return."""

    def __init__(self, message, id=None, exit_code=1):
        super().__init__(message)
        self.id = id
        self.exit_code = exit_code

    def __str__(self):
        return f"{self.id}: {self.args[0]}"


class ConfigError(Error):
    """Campaign or argument input (exit code 2)."""


class DeviceError(Error):
    """An OpenCL device or kernel build (exit code 3)."""


class IoError(Error):
    """A file: missing, damaged, unwritable (exit code 4)."""


class PluginError(Error):
    """A scenario plugin (exit code 5)."""


class PhysicsError(Error):
    """The physics refused the input (exit code 6)."""


class CellsFailed(Error):
    """Some cells of a sweep failed and the others ran (EDM-SWP-020, exit code 7 of `edm sweep`):
    .sweep is the campaign (edm.Sweep) with each cell's state and error."""

    def __init__(self, message, id=None, exit_code=7):
        super().__init__(message, id, exit_code)
        self.sweep = None


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (KeyboardInterrupt): its checkpoint is written; edm.resume(folder)
    continues it, as `edm resume` does after SIGINT."""

    def __init__(self, message, id=None, exit_code=130):
        super().__init__(message)
        self.id = id
        self.exit_code = exit_code

    def __str__(self):
        return f"{self.id}: {self.args[0]}"


_core._set_error_classes({c.__name__: c for c in
                          (Error, ConfigError, DeviceError, IoError, PluginError, PhysicsError, CellsFailed,
                           Interrupted)})


def _toml_value(v):
    """A Python value as TOML text (the form `edm run --set key=value` takes)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, os.PathLike):
        return json.dumps(os.fspath(v))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise ConfigError(f"cannot write {v!r} ({type(v).__name__}) as a campaign value: "
                      "use a number, a string, a bool or a list of them", "EDM-PY-002", 2)


def _toml_text(d, prefix=""):
    """A nested dict {"screen": {"nx": 64}} as TOML text."""
    if not isinstance(d, dict):
        raise ConfigError(f"a campaign is a dict of sections, got {type(d).__name__}", "EDM-PY-002", 2)
    lines, tables = [], []
    for k, v in d.items():
        if not isinstance(k, str):
            raise ConfigError(f"campaign key {k!r} is not a string", "EDM-PY-002", 2)
        if isinstance(v, dict):
            tables.append((k, v))
        else:
            lines.append(f"{json.dumps(k)} = {_toml_value(v)}")
    out = ""
    if prefix and lines:
        out += f"[{prefix}]\n"
    out += "".join(line + "\n" for line in lines)
    for k, v in tables:
        out += _toml_text(v, f"{prefix}.{json.dumps(k)}" if prefix else json.dumps(k))
    return out


def _set_text(v):
    """A value as `edm run --set key=value` types it: a string in double quotes is taken as it is
    between them (no escapes), numbers and bools as TOML writes them."""
    if isinstance(v, (str, os.PathLike)):
        return '"' + os.fspath(v) + '"'
    if isinstance(v, (bool, int, float)):
        return _toml_value(v)
    raise ConfigError(f"cannot pass {v!r} ({type(v).__name__}) as an override: use a number, a string or a bool",
                      "EDM-PY-002", 2)


def _overrides(kw):
    """Keyword overrides: screen__nx=64 or {"screen.nx": 64} → [("screen.nx", "64")]."""
    return [(k.replace("__", "."), _set_text(v)) for k, v in kw.items()]


class Campaign:
    """A validated campaign: from a campaign file or a run's run.toml (replay), a dict of sections,
    with keyword overrides (section__key=value, or set={"section.key": value}) applied last, as
    `edm run --set` does. Invalid input raises ConfigError with the id `edm run` would print."""

    def __init__(self, source=None, *, set=None, **overrides):
        kw = dict(set or {})
        kw.update(overrides)
        pairs = _overrides(kw)
        if isinstance(source, Campaign):
            self._c = _core.parse_text(source.effective_toml, source.source, pairs)
        elif isinstance(source, dict):
            self._c = _core.parse_text(_toml_text(source), "<dict>", pairs)
        elif isinstance(source, (str, os.PathLike)):
            self._c = _core.load_file(os.fspath(source), pairs)
        elif source is None:
            self._c = _core.parse_text("", "<keywords>", pairs)
        else:
            raise ConfigError(f"a campaign comes from a file, a dict or a Campaign, not {type(source).__name__}",
                              "EDM-PY-002", 2)

    @property
    def scenario(self):
        return self._c.scenario

    @property
    def source(self):
        return self._c.source

    @property
    def effective_toml(self):
        """Every key's effective value, as run.toml's [campaign] records it."""
        return self._c.effective_toml

    def to_dict(self):
        return tomllib.loads(self._c.effective_toml)

    @property
    def origins(self):
        """Where each key came from: default, file, environment or command line (overrides)."""
        return dict(self._c.origins)

    def __repr__(self):
        return f"<edm.Campaign {self.scenario} from {self.source}>"


def _in_notebook():
    return "ipykernel" in sys.modules


class _Bar:
    """A one-line updating progress bar on a terminal or in Jupyter; nothing elsewhere (a log)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.last = 0.0

    def __call__(self, p):
        if not p["total"]:
            return  # a phase before the first batch: nothing to draw yet
        total = max(int(p["total"]), 1)
        frac = min(int(p["done"]) / total, 1.0)
        eta = p["eta"]
        eta_text = f", {eta:.0f} s to go" if isinstance(eta, float) and math.isfinite(eta) and frac < 1 else ""
        width = 30
        bar = "#" * int(round(frac * width))
        cell = f"{p['cell']}: " if p.get("cell") else ""
        self.stream.write(f"\r{cell}[{bar:<{width}}] {int(p['done'])}/{total} electrons, {p['elapsed']:.1f} s{eta_text}  ")
        self.stream.flush()

    def end(self):
        self.stream.write("\n")
        self.stream.flush()


def _progress(progress):
    if progress == "auto":
        try:
            tty = sys.stdout.isatty()
        except (AttributeError, ValueError):
            tty = False
        return _Bar() if (tty or _in_notebook()) else None
    if progress in (None, False):
        return None
    if progress is True:
        return _Bar()
    if callable(progress):
        return progress
    raise ConfigError(f"progress must be 'auto', True, False, None or a callable, not {progress!r}", "EDM-PY-002", 2)


def _warn(message):
    import warnings
    warnings.warn(message, EdmWarning, stacklevel=3)


class EdmWarning(UserWarning):
    """What a run warned about (also in run.toml [warnings])."""


def run(campaign, output=None, device=None, progress="auto", overwrite=False, dry_run=False, checkpoint_every=0,
        **overrides):
    """Runs a campaign (a Campaign, a file, or a dict) into `output` and returns its Run.
    device: a device spec as `edm run --device` takes it ("auto", "gpu", "0,1", a name).
    progress: "auto" (a bar on a terminal or in Jupyter, nothing in a log), True, None or a callable
    given a dict (done, total, resumed, elapsed, eta, spectra_behind). Ctrl-C writes a checkpoint
    and raises edm.Interrupted (a KeyboardInterrupt); edm.resume(output) continues."""
    extra = dict(overrides)
    if output is not None:
        extra["run__output"] = os.fspath(output)
    if device is not None:
        extra["accumulator__devices"] = str(device)
    c = campaign if isinstance(campaign, Campaign) and not extra else Campaign(campaign, **extra)
    bar = _progress(progress)
    try:
        s = _core.run(c._c, overwrite, dry_run, int(checkpoint_every), bar, _warn)
    finally:
        if isinstance(bar, _Bar):
            bar.end()
    return s if dry_run else Run(s["folder"], summary=s)


def resume(folder, progress="auto"):
    """Continues a stopped run from its checkpoint (as `edm resume FOLDER`)."""
    bar = _progress(progress)
    try:
        s = _core.resume(os.fspath(folder), bar, _warn)
    finally:
        if isinstance(bar, _Bar):
            bar.end()
    return Run(s["folder"], summary=s)


def _sweep_file(source, output, workdir):
    """A sweep's campaign file: a path as it is; a dict written as TOML into `workdir` (its data
    files' relative paths made absolute from the current folder, as edm.Campaign(dict) reads them)."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if not isinstance(source, dict):
        raise ConfigError(f"a sweep comes from a campaign file or a dict, not {type(source).__name__}",
                          "EDM-PY-002", 2)
    d = {k: (dict(v) if isinstance(v, dict) else v) for k, v in source.items()}
    for section in d.values():
        if isinstance(section, dict) and isinstance(section.get("file"), (str, os.PathLike)):
            section["file"] = os.path.abspath(os.fspath(section["file"]))
    if output is None and not (isinstance(d.get("run"), dict) and "output" in d["run"]):
        raise ConfigError("a sweep given as a dict needs output= (or [run] output): the campaign folder",
                          "EDM-PY-002", 2)
    path = os.path.join(workdir, "sweep.toml")
    with open(path, "w") as f:
        f.write(_toml_text(d))
    return path


def sweep(campaign, output=None, device=None, jobs=1, progress="auto", retry_failed=False, allow_large=False,
          checkpoint_every=0, cell=None, **overrides):
    """Runs the cells of a campaign's [sweep] table (a file, or a dict with a "sweep" section) in
    turn into `output`/<label>/, as `edm sweep CAMPAIGN` does (the same executor in libedm), and
    returns the campaign as an edm.Sweep. Done cells are skipped and stopped ones resumed.
    device: the device spec of every cell (`--device`); jobs: 1 (cells in turn; for one cell per
    device at a time use `edm sweep --parallel-devices`); progress as for edm.run, its dicts with
    the "cell" label; retry_failed, allow_large (`--yes`), checkpoint_every and cell (`--cell K`) as
    the options of edm sweep. Ctrl-C stops the running cell at its checkpoint and raises
    edm.Interrupted (EDM-SWP-026); failed cells raise edm.CellsFailed (EDM-SWP-020), whose .sweep
    holds the table."""
    import tempfile
    if jobs != 1:
        raise ConfigError(f"edm.sweep(jobs={jobs!r}): cells run in turn in this process (jobs=1); "
                          "`edm sweep --parallel-devices` runs one cell per device at a time", "EDM-PY-002", 2)
    extra = dict(overrides)
    if output is not None:
        extra["run__output"] = os.fspath(output)
    if device is not None:
        extra["accumulator__devices"] = str(device)
    bar = _progress(progress)
    with tempfile.TemporaryDirectory(prefix="edm_sweep_") as workdir:
        loaded = _core.load_sweep(_sweep_file(campaign, output, workdir), _overrides(extra), bool(allow_large))
        result = Sweep(loaded.output, labels=loaded.labels, read=False)
        try:
            _core.run_sweep(loaded, bool(retry_failed), int(checkpoint_every), -1 if cell is None else int(cell),
                            bar, _warn, None)
        except CellsFailed as e:
            e.sweep = result
            raise
        finally:
            if isinstance(bar, _Bar):
                bar.end()
    return result


def devices():
    """The OpenCL devices as `edm devices` lists them."""
    return _core.devices()


def plugins():
    """The scenario plugins found on the search path."""
    return _core.plugins()


def schema(scenario=""):
    """Every campaign key (type, unit, default, meaning, rule); a scenario's own section with its name."""
    return _core.schema(scenario)


from ._run import Run, open_run  # noqa: E402  (Run reads results through libedm's io owners)
from ._sweep import Sweep, open_sweep  # noqa: E402
