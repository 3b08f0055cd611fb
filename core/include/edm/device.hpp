// OpenCL device runtime without OpenCL types in the interface (the C++ bindings stay inside core):
// enumerate platforms and devices, select by index, name substring or type, refuse devices without
// FP64, build programs from cl/ (embedded, or EDM_CL_PATH) with a complete-key on-disk cache.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace edm {

struct DeviceInfo {
  int index = 0;              // global index over all platforms, as `edm devices` lists it
  std::string platform, name, vendor, driver_version, device_version, type;  // type: GPU | CPU | ACCELERATOR
  unsigned compute_units = 0;
  std::uint64_t global_memory = 0, max_allocation = 0, local_memory = 0;
  std::size_t max_work_group = 0;
  bool fp64 = false;
  unsigned double_width = 1;  // CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE: FP64 lanes of one vector operation
};

// Every device of every platform (never throws for a platform that fails to answer: it is skipped).
std::vector<DeviceInfo> list_devices();

// Selects devices by a spec: "auto" (first FP64 GPU, else first FP64 device), "all" (every FP64
// GPU, or every FP64 device when there is no FP64 GPU), "0,1" (indices), "gpu"/"cpu" (type), or a name substring. Throws ConfigError naming the
// spec when nothing matches, DeviceError naming the device when it lacks FP64.
std::vector<DeviceInfo> select_devices(const std::string& spec);
// The same for a spec that is the value of accumulator.devices: `origin` (value_origin(), e.g. "from
// the environment variable EDM_DEVICE") follows the value in the ConfigError, so that a device the
// user never typed on the command line is traced to where it was set.
std::vector<DeviceInfo> select_devices(const std::string& spec, const std::string& origin);

class Device;  // an OpenCL context + in-order profiling queue on one device (defined in core)
std::shared_ptr<Device> open_device(const DeviceInfo& info);
const DeviceInfo& device_info(const Device& d);

// The CLBlast parameter sets open_device applies to this device (edm's table in
// core/src/field/tuning.cpp, unless EDM_CLBLAST_TUNING=0), as run.toml's [tuning] clblast records
// them: "CLBlast default" when no row matches, else each row as "NAME: KERNEL KEY=VALUE …".
std::string clblast_tuning_record(const DeviceInfo& device);

// Measured FP64 peak of the device in FLOP/s: an FMA-chain probe kernel (cl/fma_peak.cl) timed with
// profiling events, scaled up until one launch takes ≳ 50 ms. The denominator of peak_fraction.
double measure_fp64_peak(Device& d);

}  // namespace edm
