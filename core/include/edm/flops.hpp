// FLOPs per slot of the field kernel, counted from the kernel's own source: cl/lw_slot.cl (the
// per-slot arithmetic of cl/lienard_wiechert.cl) is compiled into libedm as C++ with a counting
// number type and run on a representative trajectory. `edm bench` divides by it for FLOP/s.
#pragma once
#include "edm/kernel_options.hpp"
#include "edm/screen.hpp"  // Mode

namespace edm {

// FLOPs per slot (electron × pixel × sample) in the kernel's steady state: a warm sample (midpoint
// predictor, exactly newton_iters safeguarded Newton steps), the fields at the root and the slot
// update (E, B; split mode also E_far, B_far). Convention: +, −, ×, ÷ count 1; fma 2; sqrt 1;
// rsqrt 2 (a square root and a division); comparisons, selects, fabs, floor, fmax, negation and
// conversions 0. Left out: the per-work-item setup and the two converged (cold) solves per sample
// chunk — 2 of ~830 samples per chunk in the benchmark cell. Representative trajectory: a γ ≈ 5
// helix seen by 3 × 3 pixels on axis; the count is the most frequent per-slot count there (the path
// without a bisection fallback), so it is deterministic and exactly linear in newton_iters.
// Independent of sample chunks, work-group and group sizes and of coef_reuse (memory, not
// arithmetic: the light front is formed once per uploaded batch, not per load); with fast_recip the
// refined reciprocals count as the operation they replace (lw_rcp 1, lw_rsqrt_nr 2, the Newton
// quotient as g·rcp(2h)), so a division becomes a reciprocal and a product (2) and a square root
// x·rsqrt(x) (3), whatever the seed (nv_seed).
double flop_per_slot(const KernelOptions& options, Mode mode);

}  // namespace edm
