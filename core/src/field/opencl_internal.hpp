// Internal: the Device class behind edm/device.hpp (an OpenCL context, an in-order profiling queue
// for kernels and a second in-order queue for uploads) and the one function that builds programs.
// Uses the OpenCL C++ bindings, which never appear in public headers.
#pragma once
#include <CL/opencl.hpp>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "edm/device.hpp"
#include "edm/error.hpp"

namespace edm {

class Device {
 public:
  Device(const DeviceInfo& info, const cl::Platform& platform, const cl::Device& device);

  const DeviceInfo& info() const { return info_; }
  const cl::Device& device() const { return device_; }
  const cl::Context& context() const { return context_; }
  // Kernels: in order (deterministic accumulation order) with profiling (kernel time).
  cl::CommandQueue& queue() { return queue_; }
  // Uploads: a separate in-order queue, so a blocking upload does not wait for the kernels queued
  // before it on queue() (batch k+1's splines go up while batch k's launches run).
  cl::CommandQueue& transfer_queue() { return transfer_; }

  // Builds (or loads from the on-disk cache) a program made of the given cl/ files after the
  // generated `#define NAME VALUE` lines. Programs are also memoised per device in memory.
  // max_registers > 0 caps the registers per work-item where the compiler has such an option
  // (NVIDIA: -cl-nv-maxrregcount); ignored elsewhere.
  cl::Program program(const std::vector<std::string>& files,
                      const std::map<std::string, std::string>& defines, int max_registers = 0);

 private:
  cl::Program build_from_source(const std::string& source, const std::string& options);

  DeviceInfo info_;
  cl::Platform platform_;
  cl::Device device_;
  cl::Context context_;
  cl::CommandQueue queue_, transfer_;
  std::mutex mutex_;
  std::map<std::string, cl::Program> programs_;
};

// Turns a cl::Error into a DeviceError carrying the status, the failing call and our context
// ("creating the field buffers on device 0 (…)").
[[noreturn]] void throw_device_error(const cl::Error& e, const std::string& context);

}  // namespace edm
