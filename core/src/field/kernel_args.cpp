// Checks a kernel's host-side argument list (kernel_args.hpp) against its signature in the cl/
// source and against the built kernel.
#include "field/kernel_args.hpp"

#include <algorithm>
#include <cctype>

namespace edm::detail {
namespace {

// The source with // and /* */ comments replaced by spaces (kernel signatures hold no string
// literals, so no quoting is tracked).
std::string without_comments(std::string_view s) {
  std::string out(s);
  for (std::size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '/' && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
    } else if (out[i] == '/' && out[i + 1] == '*') {
      std::size_t j = i + 2;
      while (j + 1 < out.size() && !(out[j] == '*' && out[j + 1] == '/')) ++j;
      for (std::size_t k = i; k < std::min(out.size(), j + 2); ++k) out[k] = out[k] == '\n' ? '\n' : ' ';
      i = j + 1;
    }
  }
  return out;
}

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The last identifier of one parameter declaration ("__global const double* restrict coef").
std::string last_identifier(std::string_view decl) {
  std::size_t end = decl.size();
  while (end > 0 && !is_ident(decl[end - 1])) --end;
  std::size_t begin = end;
  while (begin > 0 && is_ident(decl[begin - 1])) --begin;
  return std::string(decl.substr(begin, end - begin));
}

// The position just after "__kernel void <kernel>(" (or "kernel void"), or npos.
std::size_t find_parameter_list(const std::string& src, std::string_view kernel) {
  for (std::size_t at = src.find(kernel); at != std::string::npos; at = src.find(kernel, at + 1)) {
    const std::size_t after = at + kernel.size();
    if ((at > 0 && is_ident(src[at - 1])) || (after < src.size() && is_ident(src[after]))) continue;
    std::size_t open = after;
    while (open < src.size() && std::isspace(static_cast<unsigned char>(src[open]))) ++open;
    if (open >= src.size() || src[open] != '(') continue;
    const std::size_t line = src.rfind('\n', at);
    const std::string_view head(src.data() + (line == std::string::npos ? 0 : line + 1),
                                at - (line == std::string::npos ? 0 : line + 1));
    if (head.find("kernel") != std::string_view::npos && head.find("void") != std::string_view::npos)
      return open + 1;
  }
  return std::string::npos;
}

std::string joined(const auto& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return "(" + s + ")";
}

}  // namespace

std::vector<std::string> kernel_parameter_names(std::string_view source, std::string_view kernel) {
  const std::string src = without_comments(source);
  const std::size_t begin = find_parameter_list(src, kernel);
  std::vector<std::string> names;
  if (begin == std::string::npos) return names;
  int depth = 0;
  std::size_t start = begin;
  for (std::size_t i = begin; i < src.size(); ++i) {
    const char c = src[i];
    if (c == '(') ++depth;
    if ((c == ',' && depth == 0) || (c == ')' && depth == 0)) {
      const std::string name = last_identifier(std::string_view(src).substr(start, i - start));
      if (!name.empty()) names.push_back(name);
      if (c == ')') break;
      start = i + 1;
    }
    if (c == ')') --depth;
  }
  return names;
}

void check_kernel_signature(const cl::Kernel& built, std::string_view kernel,
                            std::span<const std::string_view> args, std::string_view source) {
  const std::vector<std::string> declared = kernel_parameter_names(source, kernel);
  const auto fail = [&](const std::string& what) {
    throw DeviceError("EDM-CL-030", "kernel " + std::string(kernel) + ": " + what + "; the host binds " +
                                        joined(args) + " (core/src/field/kernel_args.hpp)");
  };
  if (!std::equal(declared.begin(), declared.end(), args.begin(), args.end()))
    fail("the source declares " + joined(declared));
  cl_uint count = 0;
  try {
    count = built.getInfo<CL_KERNEL_NUM_ARGS>();
  } catch (const cl::Error& e) {
    throw_device_error(e, "querying the arguments of kernel " + std::string(kernel));
  }
  if (count != args.size()) fail("the built kernel takes " + std::to_string(count) + " arguments");
  for (cl_uint i = 0; i < count; ++i) {
    std::string name;
    try {
      name = built.getArgInfo<CL_KERNEL_ARG_NAME>(i);
    } catch (const cl::Error&) {
      return;  // not reported without -cl-kernel-arg-info on this platform: the source check stands
    }
    name.erase(name.find_last_not_of('\0') + 1);
    if (name.empty()) return;  // a platform that answers without a name: nothing to compare
    if (name != args[i]) fail("the built kernel's argument " + std::to_string(i) + " is " + name);
  }
}

}  // namespace edm::detail
