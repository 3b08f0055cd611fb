// OpenCL device runtime: enumerate platforms/devices, select by spec, open a context with an in-order
// profiling queue, and build programs from cl/ in ONE place (defines + helpers + kernel + every vendor
// quirk, each with its reason) with an on-disk binary cache keyed by everything that changes the
// binary (source, options, platform, driver, device: an incomplete key is worse than no cache).
#include <clblast.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <unistd.h>

#include "field/fnv1a.hpp"
#include "field/kernels.hpp"
#include "field/opencl_internal.hpp"
#include "field/tuning.hpp"

namespace edm {

const char* cl_status_name(int status) {
  switch (status) {
#define EDM_CASE(x) \
  case x:           \
    return #x;
    EDM_CASE(CL_SUCCESS)
    EDM_CASE(CL_DEVICE_NOT_FOUND)
    EDM_CASE(CL_DEVICE_NOT_AVAILABLE)
    EDM_CASE(CL_COMPILER_NOT_AVAILABLE)
    EDM_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    EDM_CASE(CL_OUT_OF_RESOURCES)
    EDM_CASE(CL_OUT_OF_HOST_MEMORY)
    EDM_CASE(CL_PROFILING_INFO_NOT_AVAILABLE)
    EDM_CASE(CL_MEM_COPY_OVERLAP)
    EDM_CASE(CL_IMAGE_FORMAT_MISMATCH)
    EDM_CASE(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    EDM_CASE(CL_BUILD_PROGRAM_FAILURE)
    EDM_CASE(CL_MAP_FAILURE)
    EDM_CASE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    EDM_CASE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    EDM_CASE(CL_COMPILE_PROGRAM_FAILURE)
    EDM_CASE(CL_LINKER_NOT_AVAILABLE)
    EDM_CASE(CL_LINK_PROGRAM_FAILURE)
    EDM_CASE(CL_DEVICE_PARTITION_FAILED)
    EDM_CASE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    EDM_CASE(CL_INVALID_VALUE)
    EDM_CASE(CL_INVALID_DEVICE_TYPE)
    EDM_CASE(CL_INVALID_PLATFORM)
    EDM_CASE(CL_INVALID_DEVICE)
    EDM_CASE(CL_INVALID_CONTEXT)
    EDM_CASE(CL_INVALID_QUEUE_PROPERTIES)
    EDM_CASE(CL_INVALID_COMMAND_QUEUE)
    EDM_CASE(CL_INVALID_HOST_PTR)
    EDM_CASE(CL_INVALID_MEM_OBJECT)
    EDM_CASE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    EDM_CASE(CL_INVALID_IMAGE_SIZE)
    EDM_CASE(CL_INVALID_SAMPLER)
    EDM_CASE(CL_INVALID_BINARY)
    EDM_CASE(CL_INVALID_BUILD_OPTIONS)
    EDM_CASE(CL_INVALID_PROGRAM)
    EDM_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
    EDM_CASE(CL_INVALID_KERNEL_NAME)
    EDM_CASE(CL_INVALID_KERNEL_DEFINITION)
    EDM_CASE(CL_INVALID_KERNEL)
    EDM_CASE(CL_INVALID_ARG_INDEX)
    EDM_CASE(CL_INVALID_ARG_VALUE)
    EDM_CASE(CL_INVALID_ARG_SIZE)
    EDM_CASE(CL_INVALID_KERNEL_ARGS)
    EDM_CASE(CL_INVALID_WORK_DIMENSION)
    EDM_CASE(CL_INVALID_WORK_GROUP_SIZE)
    EDM_CASE(CL_INVALID_WORK_ITEM_SIZE)
    EDM_CASE(CL_INVALID_GLOBAL_OFFSET)
    EDM_CASE(CL_INVALID_EVENT_WAIT_LIST)
    EDM_CASE(CL_INVALID_EVENT)
    EDM_CASE(CL_INVALID_OPERATION)
    EDM_CASE(CL_INVALID_GL_OBJECT)
    EDM_CASE(CL_INVALID_BUFFER_SIZE)
    EDM_CASE(CL_INVALID_MIP_LEVEL)
    EDM_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
    EDM_CASE(CL_INVALID_PROPERTY)
    EDM_CASE(CL_INVALID_IMAGE_DESCRIPTOR)
    EDM_CASE(CL_INVALID_COMPILER_OPTIONS)
    EDM_CASE(CL_INVALID_LINKER_OPTIONS)
    EDM_CASE(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef EDM_CASE
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_UNKNOWN_ERROR";
  }
}

void throw_device_error(const cl::Error& e, const std::string& context) {
  throw DeviceError("EDM-CL-001",
                    context + ": " + e.what() + " returned " + cl_status_name(e.err()) + " (" +
                        std::to_string(e.err()) + ")",
                    e.err());
}

namespace {

std::string type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "GPU";
  if (t & CL_DEVICE_TYPE_CPU) return "CPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "ACCELERATOR";
  return "OTHER";
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace((unsigned char)s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && std::isspace((unsigned char)s[b])) ++b;
  return s.substr(b);
}

std::string lower(std::string s) {
  for (auto& c : s) c = (char)std::tolower((unsigned char)c);
  return s;
}

// Every (platform, device) pair in the global index order of `edm devices`.
struct Entry {
  cl::Platform platform;
  cl::Device device;
};
std::vector<Entry> enumerate() {
  std::vector<Entry> out;
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error&) {
    return out;  // no ICD / no platform (CL_PLATFORM_NOT_FOUND_KHR): no devices
  }
  for (auto& p : platforms) {
    std::vector<cl::Device> devices;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error&) {
      continue;  // a platform that fails to answer (or has no device) is skipped
    }
    for (auto& d : devices) out.push_back({p, d});
  }
  return out;
}

DeviceInfo describe(const Entry& e, int index) {
  DeviceInfo i;
  i.index = index;
  i.platform = trim(e.platform.getInfo<CL_PLATFORM_NAME>());
  i.name = trim(e.device.getInfo<CL_DEVICE_NAME>());
  i.vendor = trim(e.device.getInfo<CL_DEVICE_VENDOR>());
  i.driver_version = trim(e.device.getInfo<CL_DRIVER_VERSION>());
  i.device_version = trim(e.device.getInfo<CL_DEVICE_VERSION>());
  i.type = type_name(e.device.getInfo<CL_DEVICE_TYPE>());
  i.compute_units = e.device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  i.global_memory = e.device.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  i.max_allocation = e.device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  i.local_memory = e.device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  i.max_work_group = e.device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  const std::string ext = e.device.getInfo<CL_DEVICE_EXTENSIONS>();
  cl_device_fp_config fp = 0;
  try {
    fp = e.device.getInfo<CL_DEVICE_DOUBLE_FP_CONFIG>();
  } catch (const cl::Error&) {
    fp = 0;  // OpenCL 1.x devices without cl_khr_fp64 may reject the query
  }
  i.fp64 = ext.find("cl_khr_fp64") != std::string::npos || fp != 0;
  try {
    i.double_width = std::max<cl_uint>(1, e.device.getInfo<CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE>());
  } catch (const cl::Error&) {
    i.double_width = 1;
  }
  return i;
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  auto entries = enumerate();
  for (size_t k = 0; k < entries.size(); ++k) {
    try {
      out.push_back(describe(entries[k], int(k)));
    } catch (const cl::Error&) {
      // A device that fails a query stays listed with what we know, so indices stay stable.
      DeviceInfo i;
      i.index = int(k);
      i.name = "(device did not answer)";
      out.push_back(i);
    }
  }
  return out;
}

std::vector<DeviceInfo> select_devices(const std::string& spec_in) { return select_devices(spec_in, ""); }

std::vector<DeviceInfo> select_devices(const std::string& spec_in, const std::string& origin) {
  const std::string spec = trim(spec_in.empty() ? std::string("auto") : spec_in);
  const auto all = list_devices();
  auto require_fp64 = [](const DeviceInfo& d) {
    if (!d.fp64)
      throw DeviceError("EDM-DEV-002", "device " + std::to_string(d.index) + " (" + d.name + ", " +
                                           d.platform + ") has no FP64 support (cl_khr_fp64); edm "
                                           "needs double precision");
  };
  auto nothing = [&](const std::string& why) -> ConfigError {
    std::string have;
    for (auto& d : all) have += "\n  " + std::to_string(d.index) + ": " + d.name + " (" + d.platform + ")";
    if (all.empty()) have = " (no OpenCL device found at all)";
    return ConfigError("EDM-DEV-001", "accumulator.devices = \"" + spec + "\"" +
                                          (origin.empty() ? "" : " (" + origin + ")") + ": " + why +
                                          "; available devices:" + have);
  };

  std::vector<DeviceInfo> out;
  const std::string l = lower(spec);
  if (l == "auto") {
    for (auto& d : all)
      if (d.fp64 && d.type == "GPU") return {d};
    for (auto& d : all)
      if (d.fp64) return {d};
    throw nothing("no device with FP64 support");
  }
  if (l == "all") {
    // Every FP64 GPU when there are any: a node's CPU (PoCL beside the GPUs) would be the slowest
    // shard and usually cannot hold the cube. Machines without FP64 GPUs use every FP64 device.
    for (auto& d : all)
      if (d.fp64 && d.type == "GPU") out.push_back(d);
    if (out.empty())
      for (auto& d : all)
        if (d.fp64) out.push_back(d);
    if (out.empty()) throw nothing("no device with FP64 support");
    return out;
  }
  if (l == "gpu" || l == "cpu" || l == "accelerator") {
    const std::string want = l == "gpu" ? "GPU" : l == "cpu" ? "CPU" : "ACCELERATOR";
    for (auto& d : all)
      if (d.type == want && d.fp64) out.push_back(d);
    if (out.empty()) throw nothing("no FP64 device of type " + want);
    return out;
  }
  // "0,1": a comma-separated list of indices (digits, commas, spaces only).
  if (!spec.empty() && spec.find_first_not_of("0123456789, ") == std::string::npos) {
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
      item = trim(item);
      if (item.empty()) throw nothing("empty index in the list");
      const long idx = std::strtol(item.c_str(), nullptr, 10);
      if (idx < 0 || idx >= long(all.size()))
        throw nothing("device index " + item + " does not exist (" + std::to_string(all.size()) +
                      " device(s))");
      for (auto& o : out)
        if (o.index == idx) throw nothing("device index " + item + " is listed twice");
      require_fp64(all[size_t(idx)]);
      out.push_back(all[size_t(idx)]);
    }
    return out;
  }
  // Otherwise a case-insensitive substring of the device name (or platform / vendor).
  std::vector<DeviceInfo> matched;
  for (auto& d : all)
    if (lower(d.name).find(l) != std::string::npos || lower(d.platform).find(l) != std::string::npos ||
        lower(d.vendor).find(l) != std::string::npos)
      matched.push_back(d);
  if (matched.empty()) throw nothing("no device name, platform or vendor contains \"" + spec + "\"");
  for (auto& d : matched)
    if (d.fp64) out.push_back(d);
  if (out.empty()) require_fp64(matched.front());  // throws, naming the device
  return out;
}

Device::Device(const DeviceInfo& info, const cl::Platform& platform, const cl::Device& device)
    : info_(info), platform_(platform), device_(device) {
  const std::string where = "opening device " + std::to_string(info.index) + " (" + info.name + ")";
  try {
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform_(), 0};
    context_ = cl::Context(std::vector<cl::Device>{device_}, props);
    queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);  // in order
    transfer_ = cl::CommandQueue(context_, device_, 0);
  } catch (const cl::Error& e) {
    throw_device_error(e, where);
  }
}

std::shared_ptr<Device> open_device(const DeviceInfo& info) {
  auto entries = enumerate();
  if (info.index < 0 || size_t(info.index) >= entries.size())
    throw ConfigError("EDM-DEV-001", "device index " + std::to_string(info.index) + " does not exist");
  const auto& e = entries[size_t(info.index)];
  DeviceInfo now;
  try {
    now = describe(e, info.index);
  } catch (const cl::Error& err) {
    throw_device_error(err, "querying device " + std::to_string(info.index));
  }
  if (!info.name.empty() && now.name != info.name)
    throw DeviceError("EDM-DEV-003", "device " + std::to_string(info.index) + " is now '" + now.name +
                                         "', expected '" + info.name + "' (device list changed)");
  if (!now.fp64)
    throw DeviceError("EDM-DEV-002", "device " + std::to_string(info.index) + " (" + now.name +
                                         ") has no FP64 support (cl_khr_fp64)");
  auto device = std::make_shared<Device>(now, e.platform, e.device);
  // CLBlast keeps its parameters per OpenCL device for the whole process, so the table is applied
  // the first time a device is opened: a later open (another accumulator on the same device) leaves
  // them alone rather than replace them under a CLBlast call running on a worker thread.
  static std::mutex applied_mutex;
  static std::set<cl_device_id> applied;
  std::lock_guard<std::mutex> lock(applied_mutex);
  if (detail::clblast_tuning_enabled() && applied.insert(e.device()).second) {
    try {
      detail::apply_clblast_tuning(*device, detail::clblast_table());
    } catch (...) {
      applied.erase(e.device());
      throw;
    }
  }
  return device;
}

namespace detail {

std::vector<const ClblastRow*> apply_clblast_tuning(Device& device, std::span<const ClblastRow> table) {
  const DeviceInfo& info = device.info();
  const std::string where = "device " + std::to_string(info.index) + " (" + info.name + ", " + info.vendor + ")";
  const auto rows = clblast_rows(info, table);
  for (const ClblastRow* row : rows) {
    const auto params = clblast_parameters(*row, info, where);
    const std::unordered_map<std::string, std::size_t> set(params.begin(), params.end());
    const auto st = clblast::OverrideParameters(device.device()(), row->kernel, clblast::Precision::kDouble, set);
    if (st != clblast::StatusCode::kSuccess)
      throw DeviceError("EDM-DEV-021", std::string("CLBlast refused the parameter set \"") + row->name + "\" of its " +
                                           row->kernel + " kernel for " + where + " (OverrideParameters status " +
                                           std::to_string(int(st)) + "); as a way round, set EDM_CLBLAST_TUNING=0",
                        int(st));
  }
  return rows;
}

}  // namespace detail

const DeviceInfo& device_info(const Device& d) { return d.info(); }

// ---------------------------------------------------------------------------------------------
// Kernel sources and program building.

namespace detail {
std::string kernel_source(const std::string& name) {
  if (const char* dir = std::getenv("EDM_CL_PATH"); dir && *dir) {
    const auto path = std::filesystem::path(dir) / name;
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw IoError("EDM-CL-020", "EDM_CL_PATH is set but " + path.string() + " cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    return "#line 1 \"" + path.string() + "\"\n" + ss.str();
  }
  const auto& k = embedded_kernels();
  auto it = k.find(name);
  if (it == k.end()) throw IoError("EDM-CL-021", "no embedded kernel source named " + name);
  return it->second;
}
}  // namespace detail

namespace {


std::filesystem::path cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "edm";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "edm";
  return {};
}

bool cache_enabled() {
  const char* v = std::getenv("EDM_NO_KERNEL_CACHE");
  return !(v && std::string(v) == "1");
}

// OpenCL C version of the device ("OpenCL C 1.2 …") as major*10 + minor; 0 if unparsable.
int opencl_c_version(const cl::Device& d) {
  std::string v;
  try {
    v = d.getInfo<CL_DEVICE_OPENCL_C_VERSION>();
  } catch (const cl::Error&) {
    return 0;
  }
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "OpenCL C %d.%d", &major, &minor) == 2) return major * 10 + minor;
  return 0;
}

}  // namespace

namespace {

// The program's source: generated defines (tunables), then the common helpers, then the kernels.
std::string program_source(const std::vector<std::string>& files, const std::map<std::string, std::string>& defines) {
  std::string source = "// generated defines\n";
  for (const auto& [k, v] : defines) source += "#define " + k + " " + v + "\n";
  source += detail::kernel_source("common.cl") + "\n";
  for (const auto& f : files) source += detail::kernel_source(f) + "\n";
  return source;
}

// The build options, with every vendor quirk here.
std::string build_options(const cl::Device& device, bool nvidia, int max_registers) {
  std::string options;
  // -cl-std=CL1.2: our source is 1.2-compatible; asking for it explicitly keeps OpenCL 3.0
  // compilers (NVIDIA, PoCL) from enabling 2.x/3.0 semantics we do not test. A device whose
  // OpenCL C is older than 1.2 rejects the option, so it is only passed where supported.
  if (opencl_c_version(device) >= 12) options += "-cl-std=CL1.2 ";
  // No -cl-fast-relaxed-math / -cl-mad-enable / -cl-unsafe-math-optimizations: the retarded-time
  // residual and the 1/(X·u)³ factors need IEEE double semantics (and sums must be reproducible).
  // FP_CONTRACT is switched off in common.cl for the same reason.
  // NVIDIA: the driver keeps its own JIT cache (~/.nv/ComputeCache); ours sits in front of it and
  // is keyed on the driver version, so an upgrade cannot serve a stale binary.
  // NVIDIA: -cl-nv-verbose makes the build log carry ptxas's resource usage (registers per
  // work-item, spill stores/loads, stack) — the first thing to read when tuning a kernel there
  // (FieldAccumulator::build_log, printed by `edm bench`). Other platforms reject the option.
  if (nvidia) options += "-cl-nv-verbose ";
  // NVIDIA: -cl-nv-maxrregcount=N caps registers per work-item (ptxas spills beyond it); the
  // only occupancy control OpenCL offers there (no launch bounds).
  if (nvidia && max_registers > 0) options += "-cl-nv-maxrregcount=" + std::to_string(max_registers) + " ";
  // PoCL: program binaries are supported for the CPU device and embed the target CPU, which is
  // why the cache key includes the device name (PoCL names it after the CPU, e.g. pthread-skylake-…).
  return options;
}

// 64-bit FNV-1a with two different offsets gives a 128-bit key (collisions would silently load a
// wrong binary, so the key is wide and covers every input of the compiler).
std::string cache_key(const std::string& key_text) {
  char hex[40];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)detail::fnv1a(key_text),
                (unsigned long long)detail::fnv1a(key_text, 0x84222325cbf29ce4ULL));
  return hex;
}

// A cached binary, built for the device; any failure to read, load or build it is a miss.
std::optional<cl::Program> load_cached(const cl::Context& context, const cl::Device& device,
                                       const std::filesystem::path& file, const std::string& options) {
  try {
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    std::vector<unsigned char> bin((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bin.empty()) return std::nullopt;
    cl::Program::Binaries bins{bin};
    std::vector<cl_int> status;
    cl::Program p(context, {device}, bins, &status);
    p.build({device}, options.c_str());
    return p;
  } catch (...) {
    return std::nullopt;
  }
}

// Stores the program's binary atomically (temp file + rename); a failing write only costs the next
// run a build.
void store_cached(const cl::Program& program, const std::filesystem::path& dir, const std::string& key) {
  const auto tmp = dir / (key + ".tmp." + std::to_string(::getpid()));
  try {
    auto bins = program.getInfo<CL_PROGRAM_BINARIES>();
    if (bins.size() != 1 || bins[0].empty()) return;
    std::filesystem::create_directories(dir);
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(bins[0].data()), std::streamsize(bins[0].size()));
      if (!out) throw std::runtime_error("write");
    }
    std::filesystem::rename(tmp, dir / (key + ".bin"));
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
  }
}

// Where each line of the assembled program comes from: every cl/ file starts with `#line 1 "NAME"`
// (kernel_source), so a compiler that reports `NAME:LINE` needs nothing more; NVIDIA's reports
// `<kernel>:LINE` in the assembled program, which named no file (found running tests/test_device
// on the H200). The log then gets each such LINE as (NAME:LINE) and the table of the files' lines.
struct SourceMap {
  struct Piece {
    std::size_t first;  // program line of the file's line 1
    std::string name;
  };
  std::vector<Piece> pieces;
  std::size_t lines = 0;
  explicit SourceMap(const std::string& source) {
    std::istringstream in(source);
    std::string line;
    while (std::getline(in, line)) {
      ++lines;
      if (line.rfind("#line 1 \"", 0) == 0 && line.size() > 10 && line.back() == '"')
        pieces.push_back({lines + 1, line.substr(9, line.size() - 10)});
    }
  }
  // "NAME:LINE" of program line n, "" before the first file.
  std::string where(std::size_t n) const {
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it)
      if (n >= it->first) return it->name + ":" + std::to_string(n - it->first + 1);
    return "";
  }
};

std::string annotate_build_log(const std::string& log, const std::string& source) {
  const SourceMap map(source);
  if (map.pieces.empty()) return log;
  std::string out;
  const std::string tag = "<kernel>:";
  std::size_t at = 0;
  for (std::size_t k; (k = log.find(tag, at)) != std::string::npos;) {
    std::size_t e = k + tag.size();
    while (e < log.size() && std::isdigit((unsigned char)log[e])) ++e;
    const std::size_t line_end = e;
    std::string column;  // ":COLUMN" when the compiler gives one
    if (e + 1 < log.size() && log[e] == ':' && std::isdigit((unsigned char)log[e + 1])) {
      std::size_t c = e + 1;
      while (c < log.size() && std::isdigit((unsigned char)log[c])) ++c;
      column = log.substr(e, c - e);
      e = c;
    }
    out += log.substr(at, e - at);
    if (line_end > k + tag.size()) {
      // from_chars: a digit run too long for a number is left as it is (stoul threw out of the
      // handler that builds the BuildError).
      std::size_t n = 0;
      const char* first = log.data() + k + tag.size();
      if (std::from_chars(first, log.data() + line_end, n).ec == std::errc()) {
        const std::string w = map.where(n);
        if (!w.empty()) out += " (" + w + column + ")";
      }
    }
    at = e;
  }
  out += log.substr(at);
  out += "\n  lines of the program (" + std::to_string(map.lines) + "):";
  for (std::size_t i = 0; i < map.pieces.size(); ++i) {
    const std::size_t last = i + 1 < map.pieces.size() ? map.pieces[i + 1].first - 2 : map.lines;
    out += "\n    " + std::to_string(map.pieces[i].first) + "-" + std::to_string(last) + " " + map.pieces[i].name;
  }
  return out + "\n";
}

}  // namespace

// Builds from source; on failure, the build log (its lines traced to the cl/ files) and the options
// go into the BuildError.
cl::Program Device::build_from_source(const std::string& source, const std::string& options) {
  cl::Program program;
  try {
    program = cl::Program(context_, source);
  } catch (const cl::Error& e) {
    throw_device_error(e, "creating the program on device " + std::to_string(info_.index));
  }
  try {
    program.build({device_}, options.c_str());
  } catch (const cl::Error& e) {
    std::string log;
    try {
      log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
    } catch (const cl::Error&) {
      log = "(build log unavailable)";
    }
    throw BuildError("building the edm kernels for device " + std::to_string(info_.index) + " (" +
                         info_.name + ") failed: " + cl_status_name(e.err()),
                     annotate_build_log(log, source), options);
  }
  return program;
}

cl::Program Device::program(const std::vector<std::string>& files,
                            const std::map<std::string, std::string>& defines, int max_registers) {
  const std::string source = program_source(files, defines);
  const bool nvidia = platform_.getInfo<CL_PLATFORM_NAME>().find("NVIDIA") != std::string::npos;
  const std::string options = build_options(device_, nvidia, max_registers);

  std::lock_guard<std::mutex> lock(mutex_);
  const std::string key = cache_key(source + '\0' + options + '\0' + platform_.getInfo<CL_PLATFORM_NAME>() +
                                    '\0' + platform_.getInfo<CL_PLATFORM_VERSION>() + '\0' + info_.name +
                                    '\0' + info_.vendor + '\0' + info_.driver_version + '\0' +
                                    info_.device_version);
  if (auto it = programs_.find(key); it != programs_.end()) return it->second;

  const auto dir = cache_dir();
  const bool use_cache = cache_enabled() && !dir.empty();
  if (use_cache) {
    if (auto cached = load_cached(context_, device_, dir / (key + ".bin"), options)) {
      programs_[key] = *cached;
      return *cached;
    }
  }
  cl::Program program = build_from_source(source, options);
  if (use_cache) store_cached(program, dir, key);
  programs_[key] = program;
  return program;
}

}  // namespace edm

namespace edm {

double measure_fp64_peak(Device& d) {
  const std::string where = "measuring the FP64 peak of device " + std::to_string(d.info().index) + " (" +
                            d.info().name + ")";
  // OpenCL's vector types: 2, 4, 8 and 16 lanes (3 is a 4 in memory; the others do not exist).
  const unsigned w = d.info().double_width;
  const unsigned lanes = w == 2 || w == 4 || w == 8 || w == 16 ? w : 1;
  cl::Program program = d.program({"fma_peak.cl"}, {{"PEAK_WIDTH", std::to_string(lanes)}});
  try {
    cl::Kernel k(program, "fma_peak");
    // Enough work-items to fill every compute unit several times over (GPUs need many resident
    // warps/wavefronts to hide latency; CPUs vectorise across work-items).
    const std::size_t wg = std::min<std::size_t>(
        256, k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(d.device()));
    const std::size_t per_cu = d.info().type == "GPU" ? 2048 : 4 * wg;
    const std::size_t items = std::max<std::size_t>(1, d.info().compute_units * per_cu / wg) * wg;
    cl::Buffer out(d.context(), CL_MEM_WRITE_ONLY, items * sizeof(double));
    k.setArg(0, out);
    k.setArg(2, 0.999999999);
    k.setArg(3, 1e-9);
    auto launch = [&](int iters) {
      k.setArg(1, iters);
      cl::Event ev;
      d.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(items), cl::NDRange(wg), nullptr, &ev);
      ev.wait();
      return double(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                    ev.getProfilingInfo<CL_PROFILING_COMMAND_START>()) * 1e-9;
    };
    // Scale the chain length until one launch takes ≥ 50 ms (timer resolution, launch overhead),
    // then keep the best of three such launches (a shared machine only ever slows a launch down).
    int iters = 256;
    double sec = launch(iters);
    while (sec < 0.05 && iters < (1 << 26)) {
      iters *= sec < 0.005 ? 8 : 2;
      sec = launch(iters);
    }
    for (int r = 0; r < 2; ++r) sec = std::min(sec, launch(iters));
    const double best = sec > 0 ? 2.0 * 8.0 * double(lanes) * double(iters) * double(items) / sec : 0.0;
    if (!(best > 0)) throw DeviceError("EDM-DEV-010", where + ": the probe took no measurable time");
    return best;
  } catch (const cl::Error& e) {
    throw_device_error(e, where);
  }
}

}  // namespace edm
