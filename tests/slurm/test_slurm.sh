#!/bin/bash
# The SLURM executor against a real SLURM (share/docs/sweeps.md): a one-node cluster on localhost
# (slurm_cluster.sh: munged, slurmctld, slurmd) runs a campaign of three cells as a job array
# submitted by `edm sweep --slurm`; its table and run folders must equal those of the same campaign
# run locally, apart from timings, ids and hosts (compare_campaigns.py). Also: --print-only prints
# the script it writes, a second submission finds nothing to do, and --slurm without sbatch is
# EDM-SWP-021 (exit 2); --ranks-per-cell 2 runs each cell as an MPI job of 2 ranks (compare_ranks.py:
# run.toml records 2 ranks, the field equals the 1-rank cell's within tol::sharded), and a K the
# partition cannot hold is EDM-SWP-044. If the daemons cannot start the test FAILS, with their logs.
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

# --ranks-per-cell K: each array task an MPI job of K ranks (#SBATCH --ntasks=K; the task's edm sweep
# starts the cell's run as mpirun -n K, all ranks in one MPI_COMM_WORLD). The node has $(nproc) CPUs:
# K = 2 runs, K = nproc + 1 and K = 0 are refused naming the option, before anything is written.
cpus=$(nproc)
"$edm" sweep c.toml -o ranks --slurm --ranks-per-cell $((cpus + 1)) > over.log 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'EDM-SWP-044' over.log && grep -q -- "--ranks-per-cell $((cpus + 1))" over.log \
  || { cat over.log; die "--ranks-per-cell $((cpus + 1)) on $cpus CPUs: exit $rc, expected 2 and EDM-SWP-044"; }
[ ! -e ranks ] || die "a refused --ranks-per-cell wrote its campaign folder"
"$edm" sweep c.toml -o ranks --slurm --ranks-per-cell 0 > zero.log 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'EDM-SWP-032' zero.log || { cat zero.log; die "--ranks-per-cell 0: exit $rc, expected 2 and EDM-SWP-032"; }
# Open MPI refuses root without these (NOTES.md); sbatch hands the environment to the tasks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$edm" sweep c.toml -o ranks --slurm --ranks-per-cell 2 > ranks.log 2>&1 || { cat ranks.log; die "--ranks-per-cell 2: submission failed"; }
grep -q '^#SBATCH --ntasks=2$' ranks/sweep.sbatch && grep -q "'--ranks-per-cell' '2'" ranks/sweep.sbatch \
  || { cat ranks/sweep.sbatch; die "the script asks no 2 tasks per cell"; }
job2=$(sed -n 's/^submitted job array \([0-9]*\).*/\1/p' ranks.log)
[ -n "$job2" ] || { cat ranks.log; die "no job id for --ranks-per-cell 2"; }
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$job2" 2>/dev/null)" ] && break
  sleep 0.25
done
[ -z "$(squeue -h -j "$job2" 2>/dev/null)" ] || { squeue; die "job $job2 still queued after 150 s"; }
for f in ranks/.cells/slurm-*.log; do echo "---- $f"; cat "$f"; done
/usr/bin/python3 "$here/compare_ranks.py" local ranks 2 || die "the 2-rank cells differ from the 1-rank ones"
echo "PASS: job array $job ran 3 cells under SLURM; table and run folders equal the local run;" \
  "job array $job2 ran them with 2 MPI ranks each, within tol::sharded of one rank"
