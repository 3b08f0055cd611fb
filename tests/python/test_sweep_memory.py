# ctest-label: e2e
"""A sweep of 2·10⁵ cells in bounded memory (issue 30: 10⁶ cells took 2.9 GB and minutes even with
`--slurm --print-only`, since every cell was expanded into its label and overrides, the whole table
built as one toml tree and one string, and the fingerprint's text made whole).

`edm sweep CAMPAIGN --slurm --print-only --yes` over a 100 × 100 × 20 grid must:
- stay under MAX_RSS_MB of resident memory (the child's ru_maxrss from wait4): the cells are formed
  from their index when they are written, the table is written row by row;
- print the job array of every cell (0 to 199999);
- write OUTPUT/campaign.toml whose rows are the grid in order (first axis slowest), checked against
  labels and overrides computed here from the axes, and whose [campaign] fingerprint lets the same
  sweep open the folder again (a second --print-only succeeds: EDM-SWP-010 would refuse it).
The bound is memory, never time. Before the change the child's peak was about 600 MB.
"""
import os
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(__file__))
import edm_testrun  # noqa: E402

EDM = edm_testrun.edm_binary()
MAX_RSS_MB = 150
A0 = [round(0.01 * (i + 1), 2) for i in range(100)]  # 0.01 … 1.0 as a list (labels a0=0.01 …)
GAMMA = [float(2 + i) for i in range(100)]           # 2.0 … 101.0
KNOTS = [8 + i for i in range(20)]                   # 8 … 27


def campaign(out):
    cell = edm_testrun.CELL.format(mode="total", count=4, batch=4)
    axes = ("\n[sweep]\nmax_cells = 10\n"
            f"laser.a0 = [{', '.join(repr(v) for v in A0)}]\n"
            f"electrons.gamma = [{', '.join(repr(v) for v in GAMMA)}]\n"
            f"trajectory.knots_per_period = [{', '.join(str(v) for v in KNOTS)}]\n")
    return cell.replace('scenario = "inverse_thomson"', f'scenario = "inverse_thomson"\noutput = "{out}"') + axes


def run_measured(args):
    """Runs edm with args; returns (exit code, stdout, stderr, peak RSS of the child in MB)."""
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        p = subprocess.Popen([EDM] + args, stdout=so, stderr=se)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        so.seek(0)
        se.seek(0)
        return p.returncode, so.read().decode(), se.read().decode(), usage.ru_maxrss / 1024.0


def expected_cell(k):
    """Cell k of the grid (last axis fastest), as edm labels it and as its row's overrides read."""
    i, rest = divmod(k, len(GAMMA) * len(KNOTS))
    j, m = divmod(rest, len(KNOTS))
    label = f"a0={A0[i]!r},gamma={GAMMA[j]!r},knots_per_period={KNOTS[m]}"
    return label, {"laser.a0": A0[i], "electrons.gamma": GAMMA[j], "trajectory.knots_per_period": KNOTS[m]}


def main():
    n = len(A0) * len(GAMMA) * len(KNOTS)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        path = os.path.join(d, "big.toml")
        with open(path, "w") as f:
            f.write(campaign(out))
        code, stdout, stderr, rss = run_measured(["sweep", path, "--slurm", "--print-only", "--yes", "--quiet"])
        assert code == 0, stderr
        print(f"{n} cells: peak RSS {rss:.1f} MB (bound {MAX_RSS_MB} MB)")
        assert rss < MAX_RSS_MB, f"edm sweep of {n} cells --print-only peaked at {rss:.0f} MB"
        array = [line for line in stdout.splitlines() if line.startswith("#SBATCH --array=")]
        assert len(array) == 1, stdout[:2000]
        assert array[0] == "#SBATCH --array=" + ",".join(str(k) for k in range(n)), array[0][:200]

        # tomllib reads 10⁴ rows a second: the table is split at its rows and a sample of them read.
        with open(os.path.join(out, "campaign.toml"), encoding="utf-8") as f:
            parts = f.read().split("\n[[cell]]\n")
        head = tomllib.loads(parts[0])
        assert len(parts) - 1 == n, len(parts) - 1
        for k in list(range(0, n, 997)) + [n - 1]:
            row = tomllib.loads("[[cell]]\n" + parts[k + 1])["cell"][0]
            label, overrides = expected_cell(k)
            assert row["label"] == label, (k, row["label"], label)
            assert row["state"] == "pending", row
            assert row["overrides"] == overrides, (k, row["overrides"], overrides)
        assert head["campaign"]["axes"] == "laser.a0,electrons.gamma,trajectory.knots_per_period"
        assert len(head["campaign"]["fingerprint"]) == 16

        # The same sweep opens its folder again (same fingerprint), still in bounded memory.
        code, _, stderr, rss2 = run_measured(["sweep", path, "--slurm", "--print-only", "--yes", "--quiet"])
        assert code == 0, stderr
        assert rss2 < MAX_RSS_MB, f"the second --print-only peaked at {rss2:.0f} MB"
    print("ok")


if __name__ == "__main__":
    main()
