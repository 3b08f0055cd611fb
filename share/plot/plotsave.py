"""plotsave: how edm's plot scripts put a PNG in place (share/plot/edm_plot.py, edm_campaign_plot.py).

A figure is written under a temporary name in the target folder and renamed over its own name once
whole and on disk. savefig straight onto the name truncated the previous plot first, so a plot cut
short (an error, a full disk, a signal) lost it and left half a PNG, and it wrote through a symbolic
link into the file it points to (found by tests/test_hostile); os.replace swaps the name alone, and
two plots of one folder drawn at once each leave a whole PNG (the later one wins).
"""
import contextlib
import os
import signal
import tempfile


def save_png(fig, out, name, dpi, **savefig_args):
    """fig as out/name (PNG); returns the path. The temporary file is removed on any failure."""
    path = os.path.join(out, name)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".partial", dir=out)
    # mkstemp makes the file 0600; a plot gets the mode savefig gave it (0666 less the umask).
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png", dpi=dpi, **savefig_args)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def _stop(signum, frame):
    # SIGTERM, SIGHUP and SIGQUIT end Python without unwinding: raised instead, so save_png removes
    # its temporary file.
    raise SystemExit(128 + signum)


def unwind_on_signals():
    """SIGTERM, SIGHUP and SIGQUIT unwind the script (exit 128 + the signal) instead of ending it."""
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, _stop)
