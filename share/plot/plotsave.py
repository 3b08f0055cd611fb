"""plotsave: how edm's plot scripts put a PNG in place (share/plot/edm_plot.py, edm_campaign_plot.py).

A figure is written under a temporary name in the target folder and renamed over its own name once
whole and on disk. savefig straight onto the name truncated the previous plot first, so a plot cut
short (an error, a full disk, a signal) lost it and left half a PNG, and it wrote through a symbolic
link into the file it points to (found by tests/test_hostile); os.replace swaps the name alone, and
two plots of one folder drawn at once each leave a whole PNG (the later one wins).

A folder's record of the PNGs the last plot drew (forget_stale_plots) lets the next plot remove those
it does not draw again: a spectrum with fewer harmonics left the earlier harmonic maps beside the new
ones, as if they were its own (found by a hostile tester). Files the user put there are never touched.
"""
import contextlib
import os
import signal
import tempfile


def _replace_whole(out, name, binary, write):
    """out/name written by write(f) under a temporary name in out, renamed over the name when whole
    and on disk; the temporary file is removed on any failure. Returns the path."""
    path = os.path.join(out, name)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".partial", dir=out)
    # mkstemp makes the file 0600; it gets the mode a plain open would give (0666 less the umask).
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def save_png(fig, out, name, dpi, **savefig_args):
    """fig as out/name (PNG), whole or not at all; returns the path."""
    return _replace_whole(out, name, True, lambda f: fig.savefig(f, format="png", dpi=dpi, **savefig_args))


def _stop(signum, frame):
    # SIGTERM, SIGHUP and SIGQUIT end Python without unwinding: raised instead, so save_png removes
    # its temporary file.
    raise SystemExit(128 + signum)


def unwind_on_signals():
    """SIGTERM, SIGHUP and SIGQUIT unwind the script (exit 128 + the signal) instead of ending it."""
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, _stop)


RECORD = ".edm_plots"  # one PNG name a line: what the last plot of the folder drew


def forget_stale_plots(out, written):
    """After a complete plot of out: removes the PNGs the previous plot recorded and this one did not
    draw (regular files only: a name the user replaced by a link or a folder stays), then records
    this plot's. Returns the names removed."""
    record = os.path.join(out, RECORD)
    now = {os.path.basename(p) for p in written}
    before = set()
    # A regular file only: opening a FIFO put there would wait for a writer for ever (found in review).
    if os.path.isfile(record) and not os.path.islink(record):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            with open(record, encoding="utf-8") as f:
                before = {line.strip() for line in f if line.strip()}
    removed = []
    for name in sorted(before - now):
        path = os.path.join(out, name)
        # Only a plain name that the plot itself could have written (no separators, a .png).
        if os.path.basename(name) != name or not name.endswith(".png") or os.path.islink(path) or not os.path.isfile(path):
            continue
        with contextlib.suppress(OSError):
            os.unlink(path)
            removed.append(name)
    _replace_whole(out, RECORD, False, lambda f: f.write("".join(f"{n}\n" for n in sorted(now))))
    return removed
