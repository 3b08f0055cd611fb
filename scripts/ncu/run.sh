#!/usr/bin/env bash
# On the GPU machine (see prepare): dump the benchmark cell, build the CUDA harness with the
# defaults edm chooses on an H200 (G = 4, C = 7, 128 registers, state in local memory, fast_recip with the NVIDIA seeds), time it,
# and profile one launch with Nsight Compute (--clock-control none: the clocks are left alone).
set -uo pipefail
cd "$(dirname "$0")/build"
out=${OUT:-.}
EDM_PLUGIN_PATH=$PWD/../../../.devbundle/build/plugins ../../../.devbundle/env dump \
    ../../../share/campaigns/inverse_thomson_bench.toml 8 || exit 1
D="-DNEWTON_ITERS=2 -DCOEF_REUSE=1 -DSAMPLE_CHUNKS=7 -DSPLIT_MODE=0 -DELECTRON_GROUP=4 -DSCREEN_SIGN=1.0 -DLW_STATE_LOCAL=1 -DLW_WG=128 -DLW_FAST_RECIP=1 -DLW_NV_SEED=1 -DLW_INTERLEAVE=0"
nvcc -arch=sm_90 -O3 -fmad=false -maxrregcount=${NCU_MAXREG:-128} -Xptxas -v $D -I. harness.cu -o h 2>&1 | grep -E "error|registers|spill"
./h | tail -2
ncu --clock-control none -k lw_accumulate -s 1 -c 1 --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis --section Occupancy \
    --metrics breakdown:l1tex__throughput.avg.pct_of_peak_sustained_elapsed ./h > "$out/ncu.txt" 2>&1
ncu --clock-control none -k lw_accumulate -s 1 -c 1 --page source --csv --print-source sass \
    --section SourceCounters ./h > "$out/ncu_source.csv" 2>&1
grep -E "Throughput|Busy|Stall|Eligible|Occupancy|l1tex__data_pipe_lsu_wavefronts" "$out/ncu.txt" | head -30
