// The field kernels' arguments, bound by name (internal). Each kernel's parameters are listed once
// here, by name in signature order (KernelSignature), and a BoundKernel sets them by those names:
// a name that is not in the list does not compile (it is looked up at compile time), and when the
// kernel is created its list is checked against the signature in the cl/ source that was built
// and against the built kernel's argument count (and names, where the platform reports them
// without -cl-kernel-arg-info), so the list cannot drift from cl/. Nothing here changes the
// program or its build options.
#pragma once
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "field/opencl_internal.hpp"

namespace edm::detail {

template <std::size_t N>
struct KernelSignature {
  std::string_view kernel;  // the kernel's name in cl/
  std::string_view file;    // the cl/ file that defines it
  std::array<std::string_view, N> args;
};

// cl/lienard_wiechert.cl.
inline constexpr KernelSignature<22> kLwAccumulate{
    "lw_accumulate",
    "lienard_wiechert.cl",
    {"coef", "grp", "count", "nx", "ny", "samples", "half_x", "half_y", "zs", "t0_rel", "dt", "E", "B", "Ef",
     "Bf", "pixel_of", "dirs", "positions", "pos_first", "n_positions", "row0", "rows_total"}};
inline constexpr KernelSignature<2> kLwLightFront{
    "lw_light_front", "lienard_wiechert.cl", {"coef", "intervals"}};
inline constexpr KernelSignature<9> kSlabTranspose{
    "slab_transpose",
    "lienard_wiechert.cl",
    {"src", "dst", "nx", "ny", "samples", "comp", "iy0", "rows", "position_of"}};

// An argument of the kernel of signature Sig, named by a string literal and resolved to its index
// at compile time (the consteval constructor: an unknown name is a compile error).
template <const auto& Sig>
struct ArgName {
  cl_uint index;
  consteval ArgName(const char* name) : index(lookup(name)) {}  // NOLINT: implicit by design

 private:
  static consteval cl_uint lookup(std::string_view name) {
    for (std::size_t i = 0; i < Sig.args.size(); ++i)
      if (Sig.args[i] == name) return cl_uint(i);
    throw "not an argument of this kernel";  // reached only at compile time: the build fails
  }
};

// The parameter names of `kernel` as declared in `source` (comments skipped), in order; empty when
// the source declares no such kernel.
std::vector<std::string> kernel_parameter_names(std::string_view source, std::string_view kernel);

// DeviceError EDM-CL-030 unless `args` equals the parameters of `kernel` in `source` and, on the
// built kernel, its argument count (and its argument names where the platform reports them).
void check_kernel_signature(const cl::Kernel& built, std::string_view kernel,
                            std::span<const std::string_view> args, std::string_view source);

template <const auto& Sig>
class BoundKernel {
 public:
  BoundKernel() = default;
  // Creates the kernel from `program`, built from `source` (the text of Sig.file), and checks it.
  BoundKernel(const cl::Program& program, std::string_view source)
      : kernel_(program, std::string(Sig.kernel).c_str()) {
    check_kernel_signature(kernel_, Sig.kernel, Sig.args, source);
  }
  template <class T>
  void set(ArgName<Sig> name, const T& value) {
    kernel_.setArg(name.index, value);
  }
  // A by-value argument of `size` bytes (a struct such as lw_group).
  void set_bytes(ArgName<Sig> name, std::size_t size, const void* data) {
    kernel_.setArg(name.index, size, data);
  }
  cl::Kernel& kernel() { return kernel_; }

 private:
  cl::Kernel kernel_;
};

}  // namespace edm::detail
