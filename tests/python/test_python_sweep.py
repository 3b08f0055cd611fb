# ctest-label: e2e
"""edm.sweep and the bad input of edm.run (issue 33) against the edm command.

- A 2-cell sweep through edm.sweep writes the same campaign table (every column but wall_s and host)
  and the same cells (field.h5 and spectrum.h5, dataset by dataset) as `edm sweep`, bit for bit;
  its columns by header name are the table's values.
- A cell that fails (its folder holds another campaign's complete run, EDM-SWP-033) makes edm.sweep
  raise edm.CellsFailed with the id, exit code and message `edm sweep` prints, carrying the table.
- A KeyboardInterrupt while a cell runs stops the sweep with edm.Interrupted EDM-SWP-026; the same
  edm.sweep again finishes it, bit-identical to the uninterrupted `edm sweep`.
- A stop while field.h5 is being written (the progress callback raises KeyboardInterrupt in the
  "download" phase, with field.h5.partial present) raises edm.Interrupted EDM-RUN-043, leaves no
  field.h5 nor its .partial, keeps the checkpoint, and `edm resume` finishes the folder bit-identical
  to an uninterrupted run.
- edm.run into a folder whose lock a stopped (SIGSTOP) `edm run` holds raises EDM-RUN-040 with the
  message the command line prints, and the holder's run completes untouched.
"""
import os
import re
import signal
import subprocess
import sys
import time
import tomllib

import h5py

sys.path.insert(0, os.path.dirname(__file__))
import edm_testrun  # noqa: E402

EDM = edm_testrun.edm_binary()
sys.path.insert(0, os.path.join(os.environ["EDM_BUILD_DIR"], "python"))
import edm  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[...]) if isinstance(obj, h5py.Dataset) else None)
    return out


def same_datasets(a, b):
    da, db = datasets(a), datasets(b)
    if sorted(da) != sorted(db):
        return False, f"dataset lists differ: {sorted(set(da) ^ set(db))}"
    for k in da:
        if da[k].dtype != db[k].dtype or da[k].shape != db[k].shape or da[k].tobytes() != db[k].tobytes():
            return False, f"{k} differs"
    return True, f"{len(da)} datasets"


def table_rows(folder):
    """campaign.toml's rows without what differs between two executions (wall_s, host)."""
    with open(os.path.join(folder, "campaign.toml"), "rb") as f:
        rows = tomllib.load(f)["cell"]
    for r in rows:
        r.pop("wall_s", None)
        r.pop("host", None)
    return rows


def sweep_file(ws, name, values="[0.2, 0.3]", count=4, batch=0):
    path = ws.campaign(name, count=count, batch=batch)
    with open(path, "a") as f:
        f.write(f"\n[sweep]\n\"laser.a0\" = {values}\n")
    return path


def cli_error(p):
    """The `edm: EDM-…: message` line of a command's stderr as (id, message)."""
    m = re.search(r"\[(EDM-[A-Z]+-\d+)\]: (.*)", p.stderr)
    return (m.group(1), m.group(2).strip()) if m else (None, p.stderr)


with edm_testrun.Workspace("pysweep") as ws:
    # 1. The same sweep through Python and the command line.
    camp = sweep_file(ws, "sweep")
    cli, py = os.path.join(ws.dir, "cli"), os.path.join(ws.dir, "py")
    subprocess.run([EDM, "sweep", camp, "--output", cli, "--quiet"], check=True)
    seen = []
    s = edm.sweep(camp, output=py, progress=lambda p: seen.append(p.get("cell")))
    check(isinstance(s, edm.Sweep) and s.labels == [r["label"] for r in table_rows(cli)],
          f"edm.sweep returns the campaign's cells {s.labels}")
    check(table_rows(py) == table_rows(cli), "campaign.toml: the same rows as edm sweep's (wall_s, host aside)")
    for label in s.labels:
        for name in ("field.h5", "spectrum.h5"):
            ok, why = same_datasets(os.path.join(cli, label, name), os.path.join(py, label, name))
            check(ok, f"{label}/{name} bit-identical to edm sweep's ({why})")
    cli_rows = table_rows(cli)
    check(list(s.column("results.energy")) == [r["results"]["energy"] for r in cli_rows],
          "column('results.energy') is the table's energy of each cell")
    check(list(s.column("overrides.laser.a0")) == [0.2, 0.3], "column('overrides.laser.a0') is the axis")
    check(list(s.column("state")) == ["done", "done"] and list(s.column("suspect")) == [False, False]
          and s.failed == [], f"states {list(s.column('state'))}, suspect {list(s.column('suspect'))}")
    with h5py.File(os.path.join(cli, s.labels[1], "field.h5"), "r") as f:
        ex = f["E/x"][...] if "E/x" in f else None
    if ex is not None:
        check(s.run(s.labels[1]).field("E/x").data.tobytes() == ex.tobytes(), "Sweep.run(label).field('E/x')")
    check(set(seen) >= set(s.labels), f"the progress reports name the cell ({sorted(set(map(str, seen)))})")

    # The same campaign as a dict gives the same table; jobs other than 1 and a cell past the last
    # are refused.
    as_dict = tomllib.loads(open(camp).read())
    py_dict = os.path.join(ws.dir, "py_dict")
    s_dict = edm.sweep(as_dict, output=py_dict, progress=None)
    check(table_rows(py_dict) == table_rows(cli) and s_dict.labels == s.labels,
          "a dict with a sweep section gives the file's table")
    for kwargs, want in (({"jobs": 2}, "EDM-PY-002"), ({"cell": 2}, "EDM-PY-003")):
        try:
            edm.sweep(camp, output=os.path.join(ws.dir, "refused"), progress=None, **kwargs)
            check(False, f"edm.sweep({kwargs}) raises")
        except edm.ConfigError as e:
            check(e.id == want and e.exit_code == 2, f"edm.sweep({kwargs}): {e.id}")
    check(not os.path.exists(os.path.join(ws.dir, "refused")), "a refused edm.sweep writes nothing")

    # 2. A failed cell: its folder holds a complete run of another campaign (a0 = 0.4).
    other = os.path.join(ws.dir, "other")
    subprocess.run([EDM, "run", ws.campaign("other"), "--set", "laser.a0=0.4", "--output", other, "--quiet"],
                   check=True)
    camp2 = sweep_file(ws, "sweep2")
    cli2, py2 = os.path.join(ws.dir, "cli2"), os.path.join(ws.dir, "py2")
    for out in (cli2, py2):
        subprocess.run([EDM, "sweep", camp2, "--output", out, "--cell", "0", "--quiet"], check=True)
        subprocess.run(["cp", "-r", other, os.path.join(out, s.labels[1])], check=True)
    p = subprocess.run([EDM, "sweep", camp2, "--output", cli2, "--quiet"], capture_output=True, text=True)
    cli_id, cli_msg = cli_error(p)
    try:
        edm.sweep(camp2, output=py2, progress=None)
        check(False, "a sweep with a failed cell raises")
    except edm.CellsFailed as e:
        check(e.id == cli_id == "EDM-SWP-020" and e.exit_code == p.returncode == 7,
              f"failed cell: Python {e.id}/{e.exit_code}, CLI {cli_id}/{p.returncode}")
        check(str(e.args[0]).replace(py2, cli2) == cli_msg, f"the same message: {e.args[0]!r} / {cli_msg!r}")
        check(e.sweep is not None and e.sweep.failed == [s.labels[1]]
              and e.sweep.row(s.labels[1])["error"].startswith("EDM-SWP-033"),
              "the exception carries the table with the failed cell and its error")
    rows_py = [{**r, "error": r.get("error", "").replace(py2, cli2)} for r in table_rows(py2)]
    rows_cli = [{**r, "error": r.get("error", "")} for r in table_rows(cli2)]
    check(rows_py == rows_cli, "the failed sweep's table is the command line's (its folder's name aside)")

    # 3. Ctrl-C during a sweep (KeyboardInterrupt from the progress callback in the first cell).
    camp3 = sweep_file(ws, "sweep3", count=16, batch=4)
    py3, cli3 = os.path.join(ws.dir, "py3"), os.path.join(ws.dir, "cli3")

    def stop_in_first_batch(p):
        if p["done"] > 0:
            raise KeyboardInterrupt

    try:
        edm.sweep(camp3, output=py3, progress=stop_in_first_batch, checkpoint_every=1)
        check(False, "a KeyboardInterrupt stops the sweep")
    except edm.Interrupted as e:
        check(e.id == "EDM-SWP-026" and e.exit_code == 130 and isinstance(e, KeyboardInterrupt),
              f"stopped sweep: {e.id}/{e.exit_code}")
    # And a real SIGINT (Ctrl-C) in a Python process running edm.sweep, as test_python_module does
    # for edm.run: the same Interrupted.
    sig3 = os.path.join(ws.dir, "sig3")
    script = (f"import os, signal, sys\nsys.path.insert(0, {os.path.join(os.environ['EDM_BUILD_DIR'], 'python')!r})\n"
              "import edm\nsent = []\n"
              "def progress(p):\n"
              "    if not sent and p['done'] > 0:\n"
              "        sent.append(1)\n"
              "        os.kill(os.getpid(), signal.SIGINT)\n"
              "try:\n"
              f"    edm.sweep({camp3!r}, output={sig3!r}, progress=progress, checkpoint_every=1)\n"
              "    print('FINISHED')\n"
              "except edm.Interrupted as e:\n"
              "    print('INTERRUPTED', e.id)\n")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    check(p.stdout.strip() == "INTERRUPTED EDM-SWP-026", f"SIGINT during edm.sweep: {p.stdout.strip()} {p.stderr[-300:]}")
    rows = table_rows(py3)
    check(rows[0]["state"] == "pending" and "checkpoint kept" in rows[0].get("error", ""),
          f"the stopped cell is pending with its checkpoint ({rows[0].get('error')})")
    edm.sweep(camp3, output=py3, progress=None)
    subprocess.run([EDM, "sweep", camp3, "--output", cli3, "--quiet"], check=True)
    for label in (r["label"] for r in table_rows(cli3)):
        ok, why = same_datasets(os.path.join(cli3, label, "field.h5"), os.path.join(py3, label, "field.h5"))
        check(ok, f"resumed sweep: {label}/field.h5 bit-identical to edm sweep's ({why})")

    # 4. A stop while field.h5 is being written.
    long_cell = ws.campaign("long", count=16, batch=4)
    folder = os.path.join(ws.dir, "write_stop")
    partial_seen = []

    def stop_at_write(p):
        if p["phase"] == "download":
            partial_seen.append(os.path.exists(os.path.join(folder, "field.h5.partial")))
            raise KeyboardInterrupt

    try:
        edm.run(long_cell, output=folder, progress=stop_at_write, checkpoint_every=1)
        check(False, "a stop at the write raises")
    except edm.Interrupted as e:
        check(e.id == "EDM-RUN-043" and e.exit_code == 130, f"stop during the write: {e.id}/{e.exit_code}: {e}")
    check(partial_seen == [True], f"the stop came while field.h5.partial was there ({partial_seen})")
    check(not os.path.exists(os.path.join(folder, "field.h5"))
          and not os.path.exists(os.path.join(folder, "field.h5.partial")),
          f"no field.h5 nor its .partial is left ({sorted(os.listdir(folder))})")
    check(os.path.exists(os.path.join(folder, "checkpoint.h5")), "the checkpoint stands")
    r = subprocess.run([EDM, "resume", folder, "--quiet"], capture_output=True, text=True)
    check(r.returncode == 0, f"edm resume finishes the folder Python left (exit {r.returncode}) {r.stderr[-300:]}")
    ref = os.path.join(ws.dir, "uninterrupted")
    subprocess.run([EDM, "run", long_cell, "--output", ref, "--quiet"], check=True)
    if r.returncode == 0:
        ok, why = same_datasets(os.path.join(ref, "field.h5"), os.path.join(folder, "field.h5"))
        check(ok, f"and bit-identical to an uninterrupted run ({why})")

    # 5. A second run into a folder in use: a CLI run holds its lock, stopped with SIGSTOP.
    busy = os.path.join(ws.dir, "busy")
    a = subprocess.Popen([EDM, "run", ws.campaign("busy", count=64, batch=4), "--quiet", "--output", busy,
                          "--checkpoint-every", "1"])
    lock = os.path.join(busy, ".edm.lock")
    deadline = time.monotonic() + 60
    while a.poll() is None and time.monotonic() < deadline:
        try:
            if f"pid {a.pid}" in open(lock).read():
                break
        except OSError:
            pass
        time.sleep(0.002)
    if a.poll() is not None:
        check(False, "the holder finished before it could be caught holding the lock")
    else:
        os.kill(a.pid, signal.SIGSTOP)
        try:
            b = subprocess.run([EDM, "run", ws.campaign("busy"), "--quiet", "--overwrite", "--output", busy],
                               capture_output=True, text=True)
            cli_id, cli_msg = cli_error(b)
            try:
                edm.run(ws.campaign("busy"), output=busy, overwrite=True, progress=None)
                check(False, "edm.run into a busy folder raises")
            except edm.ConfigError as e:
                check(e.id == cli_id == "EDM-RUN-040" and e.exit_code == b.returncode == 2,
                      f"busy folder: Python {e.id}/{e.exit_code}, CLI {cli_id}/{b.returncode}")
                # The message names the refused command: `edm run` there, `edm.run (Python)` here.
                check(str(e.args[0]).replace("edm.run (Python)", "edm run") == cli_msg,
                      f"the command line's message: {e.args[0]!r} / {cli_msg!r}")
        finally:
            os.kill(a.pid, signal.SIGCONT)
        check(a.wait(timeout=240) == 0, "the holder's run completes")
        m = tomllib.load(open(os.path.join(busy, "run.toml"), "rb"))
        with h5py.File(os.path.join(busy, "field.h5"), "r") as f:
            fid = f.attrs.get("run_id")
        fid = fid.decode() if isinstance(fid, bytes) else fid
        check(fid is not None and fid == m.get("provenance", {}).get("run_id", m.get("run_id")),
              f"the folder holds the holder's run, whole ({fid})")

if failures:
    sys.exit(f"{len(failures)} check(s) failed: " + "; ".join(failures))
print("PASS")
