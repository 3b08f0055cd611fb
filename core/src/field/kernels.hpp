// Internal: the OpenCL C sources of cl/, embedded at build time (cmake/EmbedKernels.cmake) or read
// from EDM_CL_PATH=<dir> at run time so a kernel can be edited without relinking.
#pragma once
#include <map>
#include <string>

namespace edm::detail {

// name ("lienard_wiechert.cl") → source, each starting with `#line 1 "cl/<name>"` (generated file).
const std::map<std::string, std::string>& embedded_kernels();

// The source of one cl/ file: from $EDM_CL_PATH/<name> when that variable is set (a `#line`
// naming the disk file is prepended), else the embedded copy. Throws IoError if missing.
std::string kernel_source(const std::string& name);

}  // namespace edm::detail
