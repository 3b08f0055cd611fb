// The field rate a device reached in `edm bench` (slots/s), cached per device and driver, so that
// `edm run --dry-run` can estimate a run's time from a measurement rather than a guess.
#pragma once
#include "edm/device.hpp"

namespace edm {

void record_device_rate(const DeviceInfo& info, double slots_per_second);
double cached_device_rate(const DeviceInfo& info);  // 0 if this device was never benchmarked

}  // namespace edm
