#!/usr/bin/env bash
# ctest `oclgrind_kernels` (label checker): edm's OpenCL kernels under oclgrind, the OpenCL device
# simulator that checks every memory access of every work-item. The field kernel (lw_accumulate),
# the light-front pass (lw_light_front), the slab transpose and the FMA peak probe (fma_peak) run
# on tiny cells in the kernel variants the devices choose (GPU: solver state in local memory,
# refined-seed divisions; CPU: interleaved solves, state in registers, IEEE divisions; total and
# split mode, electron groups, sample chunks, padded work-groups), and any error oclgrind reports
# — an out-of-bounds access, a read of an uninitialised value, a data race, an API misuse — fails
# the test. Planted bugs (copies of cl/ through EDM_CL_PATH, one line changed) must be reported
# first, one of each kind, so that a checker that sees nothing cannot pass.
#   usage: oclgrind_kernels.sh EDM_BINARY FILL_SHIM_LIBRARY SOURCE_DIR WORK_DIR
#
# How edm is pointed at oclgrind: Debian's oclgrind package ships the ICD library but no .icd file,
# so a vendors folder of our own holds one, and OCL_ICD_VENDORS makes it the only platform. The
# checks are switched on by oclgrind's environment variables (OCLGRIND_DATA_RACES, …), its report
# goes to OCLGRIND_LOG. oclgrind's device has FP64 (cl_khr_fp64), so edm selects it as it is.
# Two oclgrind 21.10 limits are worked around, neither touching edm: its uninitialised-value plugin
# aborts on LLVM's `freeze` instruction, which the optimiser emits (-cl-opt-disable: no `freeze`),
# and it does not see a clEnqueueFillBuffer as initialising (fill_as_write.c).
set -uo pipefail
edm=$1 shim=$2 src=$3 work=$4
icd=/usr/lib/oclgrind/liboclgrind-rt-icd.so
if [ ! -f "$icd" ]; then
  echo "oclgrind is not installed ($icd missing): scripts/bootstrap installs it (Debian package oclgrind)" >&2
  exit 1
fi
rm -rf "$work"
mkdir -p "$work/vendors"
echo "$icd" > "$work/vendors/oclgrind.icd"

export OCL_ICD_VENDORS="$work/vendors"
export OCLGRIND_CHECK_API=1 OCLGRIND_DATA_RACES=1 OCLGRIND_UNINITIALIZED=1
export OCLGRIND_BUILD_OPTIONS=-cl-opt-disable
export EDM_NO_KERNEL_CACHE=1 XDG_CACHE_HOME="$work/cache"
unset EDM_DEVICE EDM_CL_PATH

cat > "$work/cell.toml" <<'EOF'
# 3 electrons on 3 × 2 pixels, 24 samples inside the backscattered pulse: every slot is solved.
[run]
scenario = "inverse_thomson"
mode = "total"
[laser]
profile = "gaussian"
wavelength = 800e-9
a0 = 0.1
duration = 26.7e-15
waist = 20e-6
[electrons]
distribution = "sunflower"
count = 3
radius = 5e-6
gamma = 5.0
[screen]
distance = 0.05
half_width = 1.5e-4
nx = 3
ny = 2
samples = 24
samples_per_period = 1024
EOF

failures=0
# check NAME EXPECT COMMAND...: runs COMMAND with oclgrind's report in $work/NAME.log. EXPECT clean:
# exit 0 and an empty report; any other EXPECT is text the report must contain (a planted bug).
check() {
  local name=$1 expect=$2
  shift 2
  local log="$work/$name.log"
  rm -f "$log"
  local t0=$SECONDS
  OCLGRIND_LOG="$log" LD_PRELOAD="$shim" "$@" > "$work/$name.out" 2>&1
  local rc=$?
  local report=""
  [ -s "$log" ] && report=$(head -c 4000 "$log")
  if [ "$expect" = clean ]; then
    if [ $rc -ne 0 ] || [ -n "$report" ]; then
      echo "FAIL $name: exit $rc ($((SECONDS - t0)) s)"
      sed 's/^/  | /' "$work/$name.out" | tail -20
      [ -n "$report" ] && { echo "  oclgrind reported:"; echo "$report" | sed 's/^/  | /'; }
      failures=$((failures + 1))
    else
      echo "ok   $name ($((SECONDS - t0)) s)"
    fi
  elif grep -q "$expect" "$log" 2>/dev/null; then
    echo "ok   $name: oclgrind reports the planted bug: $expect ($((SECONDS - t0)) s)"
  else
    echo "FAIL $name: oclgrind did not report '$expect' (exit $rc): the checker is blind to it"
    [ -n "$report" ] && echo "$report" | sed 's/^/  | /'
    failures=$((failures + 1))
  fi
}

# plant NAME FILE SED: a copy of cl/ with one line changed by SED (fails if the line is gone).
plant() {
  rm -rf "$work/cl_$1"
  cp -r "$src/cl" "$work/cl_$1"
  sed -i "$3" "$work/cl_$1/$2"
  if cmp -s "$src/cl/$2" "$work/cl_$1/$2"; then
    echo "FAIL plant $1: the line it changes is no longer in cl/$2; update oclgrind_kernels.sh"
    failures=$((failures + 1))
    return 1
  fi
}

run() { "$edm" run "$work/cell.toml" --quiet --overwrite "$@"; }

# The harness must see real bugs, one of each kind it checks for:
# - the light-front pass shifted by one interval writes past the end of the spline buffer;
if plant oob lienard_wiechert.cl 's/lw_form_light_front(coef + 24 \* j, SCREEN_SIGN)/lw_form_light_front(coef + 24 * (j + 1), SCREEN_SIGN)/'; then
  check planted_out_of_bounds "Invalid write" env EDM_CL_PATH="$work/cl_oob" "$edm" run "$work/cell.toml" \
    --quiet --overwrite --output "$work/run_oob"
fi
# - the transpose writing every pixel of a sample to one address: work-items race;
if plant race lienard_wiechert.cl 's/dst\[(ulong)q \* (ulong)samples + (ulong)k\] =/dst[(ulong)k] =/'; then
  check planted_data_race "data race" env EDM_CL_PATH="$work/cl_race" "$edm" run "$work/cell.toml" \
    --quiet --overwrite --output "$work/run_race"
fi
# - without the fill shim, the cube zeroed by clEnqueueFillBuffer reads as uninitialised
#   (fill_as_write.c): the uninitialised-value checker is on.
check unshimmed_fill "Uninitialized value" env LD_PRELOAD= "$edm" run "$work/cell.toml" --quiet --overwrite \
  --output "$work/run_unshimmed"

# The device's own choices (oclgrind is a GPU: state in local memory, refined-seed divisions).
check gpu_total clean run --output "$work/run_gpu_total"
# The device chooses one chunk here (24 samples, at least 16 per chunk: warm solves after each
# pixel's first two samples); the cases below set other chunks.
# Split mode (E_far, B_far), electrons in groups of 2 over 3 (a partial group), two sample chunks,
# a work-group of 4 (the last group padded: inactive work-items), tiles and rows pixel orders.
check gpu_split_groups clean run --output "$work/run_gpu_split" --set run.mode=\"split\" \
  --set accumulator.electron_group=2 --set accumulator.sample_chunks=2 --set accumulator.work_group=4 \
  --set accumulator.pixel_order=\"tiles\" --set accumulator.tile_width=2
# A chunk per sample: every solve cold (iterated to convergence from the whole span).
check gpu_cold clean run --output "$work/run_gpu_cold" --set accumulator.sample_chunks=24
# One chunk: every sample after the first two starts from the previous root (the warm path).
check rows_batched clean run --output "$work/run_rows" --set accumulator.pixel_order=\"rows\" \
  --set accumulator.electron_batch=2 --set accumulator.newton_iters=3 --set accumulator.coef_reuse=false \
  --set accumulator.sample_chunks=1
# The CPU variant (interleaved solves, state in registers, IEEE divisions) through edm bench, which
# takes the kernel knobs that are not campaign keys from the environment.
# The vector-lane kernel (cl/lw_simd.cl) with 4 lanes (oclgrind's native width is 1, so the width is
# given): 6 pixels fill one work-item and half of a second, so lanes past the last pixel are run too.
check cpu_simd clean env EDM_SIMD=4 EDM_INTERLEAVE=-1 EDM_STATE_LOCAL=-1 EDM_FAST_RECIP=-1 EDM_ELECTRON_GROUP=2 \
  "$edm" bench "$work/cell.toml" --electrons 2 --no-peak --set accumulator.sample_chunks=2
# 8 lanes: the other width whose intervals are loaded as rows and transposed (lw_vgather).
check cpu_simd8 clean env EDM_SIMD=8 EDM_INTERLEAVE=-1 EDM_STATE_LOCAL=-1 EDM_FAST_RECIP=-1 \
  "$edm" bench "$work/cell.toml" --electrons 2 --no-peak --set accumulator.sample_chunks=1
check cpu_simd_split_batched clean env EDM_SIMD=4 EDM_STATE_LOCAL=-1 EDM_FAST_RECIP=-1 \
  "$edm" run "$work/cell.toml" --quiet --overwrite --output "$work/run_simd" --set run.mode=\"split\" --set accumulator.electron_batch=2
# …and they did run on the lanes (a request the device cannot meet falls back to the scalar kernel).
if ! grep -q "simd 8" "$work/cpu_simd8.out"; then
  echo "FAIL cpu_simd8: the vector-lane kernel did not run (bench: $(grep -o 'simd [0-9]*' "$work/cpu_simd8.out"))"
  failures=$((failures + 1))
fi
if ! grep -q "simd 4" "$work/cpu_simd.out" || ! grep -q "^simd = 4" <(sed -n '/^\[config\]/,/^\[/p' "$work/run_simd/run.toml"); then
  echo "FAIL cpu_simd: the vector-lane kernel did not run (bench: $(grep -o 'simd [0-9]*' "$work/cpu_simd.out"))"
  failures=$((failures + 1))
fi
check cpu_interleave clean env EDM_INTERLEAVE=1 EDM_STATE_LOCAL=-1 EDM_FAST_RECIP=-1 EDM_ELECTRON_GROUP=2 \
  "$edm" bench "$work/cell.toml" --electrons 2 --no-peak --set accumulator.sample_chunks=2
# The FP64 peak probe as `edm devices --probe` runs it (2048 work-items of FMA chains): only the
# first and last work-group (OCLGRIND_QUICK), which covers both ends of its output buffer.
check fma_peak clean env OCLGRIND_QUICK=1 "$edm" devices --probe

if [ $failures -ne 0 ]; then
  echo "oclgrind_kernels: $failures check(s) failed (outputs and reports in $work)"
  exit 1
fi
echo "oclgrind_kernels: every kernel clean under oclgrind (out-of-bounds, uninitialised values, data races, API)"
