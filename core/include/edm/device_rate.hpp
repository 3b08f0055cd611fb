// Per-device measurements cached per device and driver (~/.cache/edm): the field rate `edm bench`
// reached (per kernel path, for `edm run --dry-run` time estimates) and the FP64 peak of the FMA-chain probe
// (FLOP/s, for the manifest's peak_fraction_field and `edm bench`), so that estimates and fractions
// come from measurements rather than guesses, without re-measuring on every run.
#pragma once
#include <string>

#include "edm/device.hpp"
#include "edm/kernel_options.hpp"
#include "edm/screen.hpp"

namespace edm {

void record_device_value(const DeviceInfo& info, const std::string& name, double value);
double cached_device_value(const DeviceInfo& info, const std::string& name);  // 0 if never measured

// The field kernel's rate that `edm bench` measured, per device and kernel PATH: the scalar kernel,
// its interleaved schedule or the lanes of width W, on a flat, spherical or far-field screen (each
// its own code). A single "rate" per device, as before, let a dry run estimate a run on the lanes
// from a rate that the scalar kernel had measured, twice as long as it would take. Kept as FLOP/s
// at the measuring run's flop_per_slot, so that another Newton step count or mode on the same path
// is estimated at its own FLOP count. cached_kernel_rate: slots/s, 0 when the path was never measured.
void record_kernel_rate(const DeviceInfo& info, const KernelOptions& effective, const Screen& screen, Mode mode,
                        double slots_per_second);
double cached_kernel_rate(const DeviceInfo& info, const KernelOptions& effective, const Screen& screen, Mode mode);
// The FMA-chain peak: measured (and cached) unless a cached value exists or `remeasure` is set.
double fp64_peak(const DeviceInfo& info, bool remeasure = false);
// The cache entry of that peak. Since the probe runs its chains on the device's FP64 vector lanes
// (cl/fma_peak.cl) it has a new name: the scalar probe's values (an eighth of an AVX-512 core's
// peak) are not read as this one's.
inline constexpr const char* kPeakValue = "peak-lanes";

}  // namespace edm
