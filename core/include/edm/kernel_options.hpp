// The field kernel's tunables and the pixel order of the cube's device layout. Only speed depends on
// them (every slot gets the same additions in the same order); the device chooses what is left 0.
#pragma once
#include <cstdint>
#include <string>

#include "edm/campaign.hpp"  // PixelOrder

namespace edm {

// PixelOrder itself (the cube's device layout, which pixels share a warp) is declared with the
// campaign's choices (campaign.hpp): the key accumulator.pixel_order sets it.
const char* pixel_order_name(PixelOrder o);  // "auto", "rings", "tiles", "rows"
PixelOrder parse_pixel_order(const std::string& name);  // ConfigError naming the key on a bad name

struct KernelOptions {
  // The retarded-time kernel (cl/lw_slot.cl): Newton (bracketed Newton per sample), Rk4 (an RK4
  // march of dτ/dt_obs from each chunk's first root: flat screens, the scalar kernel), Auto (the
  // faster one for the device, from BENCHMARKS.md; effective value after the accumulator resolves it:
  // Newton or Rk4). Unlike the tunables below, Rk4 changes results at the level of its error bound.
  FieldKernel kernel = FieldKernel::Newton;
  int substeps = 0;           // Rk4: sub-steps per sample interval (1..1024), 0 or -1 = auto: per sample,
                              // enough that one moves τ by at most an eighth of a knot (lw_rk4_substeps)
  int newton_iters = 2;       // ≥ 1 Newton steps per sample after the warm start
  bool coef_reuse = true;     // load an interval's coefficients once per sample, not per evaluation
  int sample_chunks = 0;      // C ≥ 1 chunks per pixel; 0 = from the device
  int work_group = 0;         // 0 = from the device
  int electron_group = 0;     // G ≥ 1 electrons per launch, 0 = from the device: each slot is read
                              // and written once per launch (bit-identical to G = 1, slot traffic / G)
  int tile_width = 0;         // pixels per tile row (pixel_order tiles; divides work_group);
                              // > 0 with pixel_order auto selects tiles, < 0 row order; the
                              // effective value is 0 unless the order is tiles
  PixelOrder pixel_order = PixelOrder::Auto;  // Auto: tiles when tile_width > 0, rows when
                                              // tile_width < 0, else rings (effective value set)
  int state_local = 0;        // the G electrons' solver state in local memory instead of registers:
                              // 0 = from the device (GPUs, when it fits), 1 = on, < 0 = off
  int max_registers = 0;      // register cap per work-item where the compiler has one (NVIDIA);
                              // 0 = from the device (128 on NVIDIA GPUs), < 0 = none
  int fast_recip = 0;         // divisions and square roots of the per-slot path from refined
                              // seeds (within a few ulps, no slow-path branch; seeds: nv_seed):
                              // 0 = from the device (GPUs), 1 = on, < 0 = off (the built-ins)
  int nv_seed = 0;            // with fast_recip: seeds from NVIDIA's FP64 approximation instructions
                              // (inline PTX, 2⁻²⁰: one refinement instead of two, no float round
                              // trip). 0 = from the device (NVIDIA), 1 = on (NVIDIA only), < 0 = off
  int interleave = 0;         // the G warm solves of a sample phase by phase (all predictors, each
                              // Newton step for all, all fields): overlap for out-of-order CPUs;
                              // needs the state in registers. 0 = from the device (CPUs), 1 on, < 0 off
  int simd = 0;               // W neighbouring pixels per work-item, one per lane of a doubleW
                              // (cl/lw_simd.cl; flat screens on devices with FP64 vectors, W = their
                              // native width): 0 = from the device (CPUs), 1 on, < 0 off. Effective
                              // (after resolve_tuning): W ≥ 2 lanes, or −1 (the scalar kernel)
  double ensemble_radius = 0;  // rms distance of the electrons from the screen axis (normalised; the
                               // run driver and bench set it from the cell): with pixel_order auto
                               // and no tile_width it picks rings or tiles (field/tuning.cpp)
};

}  // namespace edm
