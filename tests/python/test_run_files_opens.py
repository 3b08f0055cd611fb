# ctest-label: e2e
"""How often one command opens a run folder's run.toml (issue 29 item 1: "strace shows field.h5 and
run.toml opened once per edm spectrum"). RunManifest::read is the one parse of run.toml; a command
that reads it a second time opens it twice, which strace shows.

  - edm info RUN opens run.toml exactly once (its manifest is handed to every reader).
  - edm spectrum RUN must open it once too. At the io-folder branch it opens it 3 times
    (read_run_physics, check_field_belongs_to_run, twisted light's recorded_knots_per_period): the
    lead's analyse_run (apps/twisted_options.cpp) opens RunFolder, RunManifest and FieldFile once and
    hands them down, which makes it 1. Until then this case fails, naming the count.

Skipped, with a message, where strace is absent or not permitted (ptrace blocked in a container).

usage: python3 tests/python/test_run_toml_opens.py EDM_BINARY
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import edm_testrun  # noqa: E402

STRACE = shutil.which("strace")


def opens_of(binary, args, name, workdir):
    """The successful openat/open calls of `name` (a basename in the run folder) by `edm args`,
    in every thread and child (-f), and the command's exit status."""
    log = os.path.join(workdir, "strace.log")
    p = subprocess.run([STRACE, "-f", "-qq", "-e", "trace=open,openat", "-o", log, binary, *args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    with open(log) as fh:
        lines = fh.read().splitlines()
    # `openat(AT_FDCWD, "/…/run.toml", O_RDONLY) = 3`: the name exactly (not run.toml.partial), and a
    # descriptor returned (a failed probe, = -1 ENOENT, opens nothing).
    pattern = re.compile(r'open(at)?\(.*"([^"]*/)?' + re.escape(name) + r'",.*\)\s*=\s*\d+')
    return sum(1 for l in lines if pattern.search(l)), p


class RunTomlOpens(unittest.TestCase):
    binary = None
    ws = None
    run_dir = None

    @classmethod
    def setUpClass(cls):
        if STRACE is None:
            raise unittest.SkipTest("strace is not installed (/usr/bin/strace): cannot count opens")
        probe = subprocess.run([STRACE, "-qq", "-e", "trace=openat", "-o", os.devnull, "true"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if probe.returncode != 0:
            raise unittest.SkipTest("strace cannot trace here (ptrace not permitted): " + probe.stdout.strip())
        cls.ws = edm_testrun.Workspace("toml-opens")
        # With the run's direct spectra (/direct) and no time-domain spectrum yet, edm info also
        # shows the run's line, from its physics: main read run.toml a second time for it.
        campaign = os.path.join(cls.ws.dir, "cell.toml")
        with open(campaign, "w") as fh:
            fh.write(edm_testrun.CELL.format(mode="total", count=4, batch=0))
            fh.write("[spectra]\nenabled = true\nomega_min = 20\nomega_max = 45\ncount = 6\n")
        cls.run_dir = os.path.join(cls.ws.dir, "run")
        edm_testrun.run_edm(cls.binary, "run", campaign, "--quiet", "--output", cls.run_dir)

    @classmethod
    def tearDownClass(cls):
        if cls.ws is not None:
            cls.ws.__exit__(None, None, None)

    # unittest runs the cases in name order: edm info sees the folder before edm spectrum writes
    # its time-domain spectrum (whose recorded line edm info would show instead).
    def test_info_opens_run_toml_once(self):
        self.assertIn("/direct", edm_testrun.run_edm(self.binary, "info", self.run_dir).stdout)
        n, p = opens_of(self.binary, ["info", self.run_dir], "run.toml", self.ws.dir)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertEqual(n, 1, f"edm info opened run.toml {n} times")

    def test_spectrum_opens_run_toml_and_field_once(self):
        for name in ("run.toml", "field.h5"):
            n, p = opens_of(self.binary, ["spectrum", self.run_dir], name, self.ws.dir)
            self.assertEqual(p.returncode, 0, p.stdout)
            self.assertEqual(n, 1, f"edm spectrum opened {name} {n} times")


if __name__ == "__main__":
    RunTomlOpens.binary = edm_testrun.edm_binary()
    unittest.main(argv=sys.argv[:1], verbosity=2)
