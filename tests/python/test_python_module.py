# ctest-label: e2e
"""The Python module edm (apps/python) against the edm command: the same engine, the same answers.

- A campaign run through edm.run and through `edm run` gives the same field.h5 datasets, bit for bit.
- An invalid key raises the same EDM id (and exit code) from Python as the command line prints.
- A campaign given as a dict with keyword overrides validates like a file with --set.
- Ctrl-C (SIGINT in the Python process) during edm.run writes a checkpoint and raises edm.Interrupted,
  a KeyboardInterrupt; edm.resume finishes the run, bit-identical to an uninterrupted one.
The module is built by the default build (scripts/bootstrap installs pybind11-dev): it is required,
so its absence fails this test.
"""
import os
import re
import signal
import subprocess
import sys
import textwrap

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import edm_testrun  # noqa: E402

EDM = edm_testrun.edm_binary()
BUILD = os.environ["EDM_BUILD_DIR"]
sys.path.insert(0, os.path.join(BUILD, "python"))
import edm  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[...]
        f.visititems(visit)
    return out


def same_datasets(a, b):
    da, db = datasets(a), datasets(b)
    if sorted(da) != sorted(db):
        return False, f"dataset lists differ: {sorted(set(da) ^ set(db))}"
    for k in da:
        if da[k].dtype != db[k].dtype or da[k].shape != db[k].shape or da[k].tobytes() != db[k].tobytes():
            return False, f"{k} differs"
    return True, f"{len(da)} datasets"


def cli_error_id(campaign_file, *args):
    p = subprocess.run([EDM, "run", campaign_file, *args], capture_output=True, text=True)
    m = re.search(r"EDM-[A-Z]+-\d+", p.stderr)
    return (m.group(0) if m else None), p.returncode, p.stderr


with edm_testrun.Workspace("pymodule") as ws:
    cell = ws.campaign("cell", count=4)

    # 1. The same answers: Python and the command line, one campaign.
    cli_out = os.path.join(ws.dir, "cli")
    subprocess.run([EDM, "run", cell, "--output", cli_out, "--quiet"], check=True)
    r = edm.run(cell, output=os.path.join(ws.dir, "py"), progress=None)
    ok, why = same_datasets(os.path.join(cli_out, "field.h5"), os.path.join(r.folder, "field.h5"))
    check(ok, f"edm.run and `edm run` write the same field.h5 ({why})")

    # 2. The same errors: an unknown key, and a value out of its range.
    bad = os.path.join(ws.dir, "bad.toml")
    with open(bad, "w") as f:
        f.write(open(cell).read().replace("[screen]", "[screen]\nnxx = 4"))
    cli_id, cli_rc, _ = cli_error_id(bad, "--output", os.path.join(ws.dir, "bad_cli"))
    try:
        edm.Campaign(bad)
        check(False, "an unknown key raises in Python")
    except edm.ConfigError as e:
        check(e.id == cli_id and e.exit_code == cli_rc, f"unknown key: Python {e.id}/{e.exit_code}, CLI {cli_id}/{cli_rc}")
    cli_id, cli_rc, _ = cli_error_id(cell, "--set", "screen.nx=0", "--output", os.path.join(ws.dir, "bad_cli2"))
    try:
        edm.Campaign(cell, screen__nx=0)
        check(False, "screen.nx = 0 raises in Python")
    except edm.Error as e:
        check(e.id == cli_id and e.exit_code == cli_rc, f"screen.nx = 0: Python {e.id}/{e.exit_code}, CLI {cli_id}/{cli_rc}")

    # 3. A dict with keyword overrides is the file with --set.
    import tomllib
    as_dict = tomllib.loads(open(cell).read())
    c = edm.Campaign(as_dict, set={"screen.nx": 3}, run__output=os.path.join(ws.dir, "d"))
    check(c.to_dict()["screen"]["nx"] == 3 and c.origins["screen.nx"] == "command line",
          f"dict + overrides: screen.nx = {c.to_dict()['screen']['nx']} from {c.origins.get('screen.nx')}")
    try:
        edm.Campaign({"screen": {"nx": object()}})
        check(False, "a value of no TOML type raises")
    except edm.ConfigError as e:
        check(e.id == "EDM-PY-002", f"a value of no TOML type: {e.id}")

    # 4. Ctrl-C: a child Python process runs a campaign of many batches and gets SIGINT once the
    # first progress report arrives; it must raise edm.Interrupted and leave a checkpoint.
    long_cell = ws.campaign("long", count=64, batch=4)
    folder = os.path.join(ws.dir, "interrupted")
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {os.path.join(BUILD, "python")!r})
        import edm
        sent = []
        def progress(p):
            if not sent and p["done"] > 0:
                sent.append(1)
                os.kill(os.getpid(), signal.SIGINT)
        try:
            edm.run({long_cell!r}, output={folder!r}, progress=progress, checkpoint_every=1)
            print("FINISHED")
        except edm.Interrupted as e:
            print("INTERRUPTED", e.id, isinstance(e, KeyboardInterrupt))
    """)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    print(p.stdout.strip(), p.stderr.strip()[-400:])
    check(p.stdout.startswith("INTERRUPTED") and "True" in p.stdout, "SIGINT during edm.run raises edm.Interrupted (a KeyboardInterrupt)")
    check(os.path.exists(os.path.join(folder, "checkpoint.h5")), "the interrupted run left its checkpoint")
    if os.path.exists(os.path.join(folder, "checkpoint.h5")):
        r2 = edm.resume(folder, progress=None)
        ref = os.path.join(ws.dir, "uninterrupted")
        subprocess.run([EDM, "run", long_cell, "--output", ref, "--quiet"], check=True)
        ok, why = same_datasets(os.path.join(ref, "field.h5"), os.path.join(r2.folder, "field.h5"))
        check(ok, f"edm.resume finishes it bit-identical to an uninterrupted run ({why})")

if failures:
    sys.exit(f"{len(failures)} check(s) failed: " + "; ".join(failures))
print("PASS")
