#!/bin/bash
# gemm engineer, call 2: the dft spectra bench with the CLBlast table off and on, then the tuner's refinement.
set -o pipefail
D=.devgemm
export EDM_PLUGIN_PATH=$D/work/wt-dft/build/plugins
C=share/campaigns/inverse_thomson_bench.toml
K="screen.type=angular screen.distance=infinity screen.nx=64 screen.ny=64 screen.theta_x_min=-3e-3 screen.theta_x_max=3e-3 screen.theta_y_min=-3e-3 screen.theta_y_max=3e-3 screen.samples=2048 spectra.enabled=true spectra.omega_min=50 spectra.omega_max=150 spectra.count=2048"
{
echo "== before: EDM_CLBLAST_TUNING=0"
EDM_CLBLAST_TUNING=0 timeout 60 $D/env spectra_fft_bench $C 64 1024 $K spectra.method=dft
echo "== after: the table (H200 row)"
timeout 60 $D/env spectra_fft_bench $C 64 1024 $K spectra.method=dft
echo "== before again: EDM_CLBLAST_TUNING=0"
EDM_CLBLAST_TUNING=0 timeout 60 $D/env spectra_fft_bench $C 64 1024 $K spectra.method=dft
} 2>&1 | tee $OUT/spectra_bench_h200.txt
CANDS=$D/gemm_tune_seeds.txt STAGES=24 AROUND=2 CAP_S=95 TOP=5 timeout 130 $D/env gemm_tune gpu 4096 4096 651 4096 8192 651 4096 4096 520 2>&1 | tee $OUT/gemm_tune_h200_refine.txt
