// The field kernel's device tuning (internal): one small table of defaults per vendor and device
// type, and the functions that apply a request over it (in the manner of CLBlast's database: a row
// gives the defaults, the caller's explicit values win, combinations that cannot work are refused
// by name). The measurement behind each row's values is in BENCHMARKS.md, section
// "Tuning defaults", under the row's name.
#pragma once
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "edm/device.hpp"
#include "edm/kernel_options.hpp"
#include "edm/screen.hpp"

namespace edm {
class Device;
}

namespace edm::detail {

// The defaults for devices whose vendor contains `vendor` ("" = any) and whose type is `type`
// ("" = any); the first matching row of tuning_table() applies.
struct TuningRow {
  const char* name;  // the row's name, also its subsection in BENCHMARKS.md "Tuning defaults"
  const char* vendor;
  const char* type;
  int work_items_per_cu;  // sample_chunks: enough (position, chunk) work-items for this many per
                          // compute unit, at most max_chunks and never more than the samples
  int max_chunks;
  int electron_group;      // G, electrons per launch
  int work_group;          // the work-group aimed for (rounded down to the kernel's preferred multiple)
  bool state_local;        // the solver state in local memory whenever it fits
  int max_registers;       // register cap (NVIDIA's compiler only); −1 = none
  bool fast_recip;         // refined seeds for the divisions and square roots of the per-slot path
  bool nv_seed;            // those seeds from NVIDIA's FP64 approximation instructions
  bool interleave;         // the group's warm solves phase by phase (only with the state in registers)
  int tail_items_per_cu;   // the last batch in slabs of screen rows (accumulate_in_slabs) of at least
                           // this many (position, chunk) work-items per compute unit; 0 = in one piece
  bool simd;               // pixels on the lanes of FP64 vectors where the device has them (cl/lw_simd.cl)
  PixelOrder pixel_order;  // the order when neither pixel_order nor tile_width asks for one
  int tile_width;          // pixels per tile row when tiles are asked for without a width
};

std::span<const TuningRow> tuning_table();
const TuningRow& tuning_row(const DeviceInfo& device);

// The options after the device's defaults are applied (every 0 replaced), before the build.
struct KernelTuning {
  KernelOptions options;
  // > 0: the solver state lives in local memory, whose arrays are sized by the work-group, so the
  // work-group is fixed to this before the build (the define LW_WG); 0: chosen after the build.
  std::size_t fixed_work_group = 0;
};

// Applies `requested` over the device's row: explicit values are kept, zeros take the row's
// default; ConfigError naming the option when the values cannot work together on this device
// (`where` names the device in the message). max_parameter_bytes: the device's kernel-argument
// space (it bounds G: the launch's electrons travel by value).
KernelTuning resolve_tuning(const KernelOptions& requested, const DeviceInfo& device,
                            std::size_t max_parameter_bytes, const Screen& screen, const std::string& where);

// After the build: the work-group from the kernel's limits (unless fixed before), then the pixel
// order and its tile width. Sets options.work_group, pixel_order and tile_width.
void resolve_launch_shape(KernelTuning& tuning, const DeviceInfo& device, std::size_t kernel_max_work_group,
                          std::size_t preferred_multiple, const std::string& where);

// The slabs of screen rows the last batch of a run is launched in, so that each slab is downloaded
// and written while the next computes: `requested` (accumulator.tail_slabs) when > 0, one slab (no
// overlap) when −1, else from the device's row (enough work per slab launch to fill the device
// several times over, at most kMaxTailSlabs). `options` are the effective kernel options.
inline constexpr int kMaxTailSlabs = 8;
int tail_slabs(int requested, const DeviceInfo& device, const Screen& screen, const KernelOptions& options);

// Bytes of local memory per work-item and electron for the solver state (5 doubles; warm and the
// interval index packed into one int; cl/lienard_wiechert.cl).
constexpr std::size_t kStateBytes = 5 * sizeof(double) + sizeof(int);

// CLBlast's tuning (share/docs/developing.md, "CLBlast's parameters"): CLBlast picks its kernels'
// parameters from its own database by device, and falls back to its defaults for a device it has
// no entry for. A row here gives one of its kernels (in double precision, the only one edm calls)
// a parameter set for the devices whose vendor and name contain the row's strings; it is applied
// once per device when the device is opened (open_device), before any CLBlast call. Devices no
// row matches keep CLBlast's own choice. EDM_CLBLAST_TUNING=0 switches the table off. The
// measurement behind each row is in BENCHMARKS.md, "Tuning defaults", "CLBlast".
struct ClblastRow {
  const char* name;    // the row's name, recorded in run.toml ([tuning] clblast)
  const char* vendor;  // substring of the device's vendor
  const char* device;  // substring of the device's name
  const char* kernel;  // CLBlast's kernel: "Xgemm" (the indirect DGEMM)
  const char* params;  // every parameter of that kernel: "KEY=VALUE KEY=VALUE …"
};

std::span<const ClblastRow> clblast_table();
bool clblast_tuning_enabled();  // false when EDM_CLBLAST_TUNING=0
// The rows of `table` that match the device (at most one per kernel: the first).
std::vector<const ClblastRow*> clblast_rows(const DeviceInfo& device, std::span<const ClblastRow> table);
// The row's parameters, checked against CLBlast's constraints of its kernel and the device's local
// memory and work-group size (CLBlast itself checks none: a set that breaks them gives a kernel
// that fails to build or computes a wrong product). DeviceError EDM-DEV-020 naming the row, the
// device (`where`) and the broken rule.
std::map<std::string, std::size_t> clblast_parameters(const ClblastRow& row, const DeviceInfo& device,
                                                      const std::string& where);
// What open_device applies to a device, as run.toml records it: edm::clblast_tuning_record
// (edm/device.hpp).

// Applies the matching rows of `table` to the device with clblast::OverrideParameters (checked by
// clblast_parameters first); DeviceError EDM-DEV-021 naming the device when CLBlast refuses a set.
// Returns the rows applied. open_device calls it once per device and process with clblast_table().
std::vector<const ClblastRow*> apply_clblast_tuning(Device& device, std::span<const ClblastRow> table);

}  // namespace edm::detail
