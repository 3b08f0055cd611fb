# ctest-label: e2e
"""share/examples/edm_tour.ipynb executed headless (Debian's nbconvert and ipykernel): every cell
must run, and none may print an error, a traceback or a warning (a numpy or matplotlib warning, an
edm run's warning: a notebook a user opens must read clean). The runs go to a temporary folder."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import edm_testrun  # noqa: E402

edm_testrun.edm_binary()
SRC = os.environ["EDM_SOURCE_DIR"]
BUILD = os.environ["EDM_BUILD_DIR"]
nb_src = os.path.join(SRC, "share", "examples", "edm_tour.ipynb")

with edm_testrun.Workspace("notebook") as ws:
    nb = os.path.join(ws.dir, "edm_tour.ipynb")
    shutil.copy(nb_src, nb)
    # Python's default warning filters, as a user's Jupyter has them (PYTHONWARNINGS=default would
    # also switch on pyparsing's and zmq's own diagnostics, which no user sees).
    env = dict(os.environ, EDM_RUNS=os.path.join(ws.dir, "runs"),
               PYTHONPATH=os.path.join(BUILD, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONWARNINGS", None)
    p = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
                        "--ExecutePreprocessor.timeout=600", "--ExecutePreprocessor.kernel_name=python3",
                        "--output", "executed.ipynb", nb], cwd=ws.dir, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"nbconvert failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    out = json.load(open(os.path.join(ws.dir, "executed.ipynb")))
    problems = []
    for i, cell in enumerate(out["cells"]):
        for o in cell.get("outputs", []):
            if o["output_type"] == "error":
                problems.append(f"cell {i}: {o['ename']}: {o['evalue']}")
            elif o["output_type"] == "stream" and o.get("name") == "stderr":
                problems.append(f"cell {i} wrote to stderr: {''.join(o['text'])[:500]}")
    images = sum(1 for c in out["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    for c in out["cells"]:
        for o in c.get("outputs", []):
            if o["output_type"] == "stream" and o["name"] == "stdout":
                print("".join(o["text"]).strip()[-300:])
    if images < 4:
        problems.append(f"{images} figures drawn, 4 expected")
    if problems:
        sys.exit("the notebook does not run clean:\n" + "\n".join(problems))
print("PASS")
