#!/bin/bash
# The SLURM executor against a real SLURM (share/docs/sweeps.md): a one-node cluster on localhost
# (slurm_cluster.sh: munged, slurmctld, slurmd) runs a campaign of three cells as a job array
# submitted by `edm sweep --slurm`; its table and run folders must equal those of the same campaign
# run locally, apart from timings, ids and hosts (compare_campaigns.py). Also: --print-only prints
# the script it writes, a second submission finds nothing to do, and --slurm without sbatch is
# EDM-SWP-021 (exit 2). If the daemons cannot start the test FAILS, with their logs.
#   test_slurm.sh EDM_BINARY SOURCE_DIR
set -u
edm=$(readlink -f "${1:?edm binary}"); src=${2:?source dir}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/edm_slurm.XXXXXX)
cleanup() { "$here/slurm_cluster.sh" stop "$work/cluster"; [ "${EDM_KEEP_TMP:-0}" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

started=$("$here/slurm_cluster.sh" start "$work/cluster") || die "the SLURM daemons did not start (logs above)"
eval "$started"
[ -n "${SLURM_CONF:-}" ] || die "no SLURM_CONF from slurm_cluster.sh"
export PATH="$PATH:/usr/sbin"

cd "$work" || die "no work folder"
cat > c.toml <<'TOML'
[run]
scenario = "inverse_thomson"
mode = "total"
[laser]
a0 = 0.3
duration = 10.7e-15
waist = 10e-6
[electrons]
count = 4
radius = 3e-6
gamma = 3.0
[screen]
distance = 0.02
half_width = 5e-5
nx = 6
ny = 6
samples = 256
samples_per_period = 128
[accumulator]
devices = "0"
[sweep]
laser.a0 = [0.1, 0.2, 0.3]
electrons.gamma = [3.0]
TOML

"$edm" sweep c.toml -o local --quiet > local.log 2>&1 || { cat local.log; die "the local sweep failed"; }

"$edm" sweep c.toml -o slurm --slurm --print-only > printed.sh 2> print.err || { cat print.err; die "--print-only failed"; }
grep -q '^#SBATCH --array=0,1,2$' printed.sh || { cat printed.sh; die "the script has no array of cells 0,1,2"; }
cmp -s printed.sh slurm/sweep.sbatch || die "--print-only printed another script than slurm/sweep.sbatch"

PATH=/nonexistent "$edm" sweep c.toml -o slurm --slurm > nosb.log 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'EDM-SWP-021' nosb.log || { cat nosb.log; die "--slurm without sbatch: exit $rc, expected 2 and EDM-SWP-021"; }

"$edm" sweep c.toml -o slurm --slurm --array-limit 2 > submit.log 2>&1 || { cat submit.log; die "submission failed"; }
job=$(sed -n 's/^submitted job array \([0-9]*\).*/\1/p' submit.log)
[ -n "$job" ] || { cat submit.log; die "no job id in the submission's output"; }
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.25
done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || { squeue; die "job $job still queued after 150 s"; }
for f in slurm/.cells/slurm-*.log; do echo "---- $f"; cat "$f"; done

/usr/bin/python3 "$here/compare_campaigns.py" local slurm || die "the SLURM campaign differs from the local one"
"$edm" campaign status slurm || die "edm campaign status failed"
"$edm" sweep c.toml -o slurm --slurm > again.log 2>&1 || { cat again.log; die "the second submission failed"; }
grep -q 'nothing to submit' again.log || { cat again.log; die "a second submission of a done campaign submitted"; }
echo "PASS: job array $job ran 3 cells under SLURM; table and run folders equal the local run"
