// The error-id registry: the table of ids.def (one line per id) and its lookup. The lowest level of
// core: it includes nothing of the rest. `edm explain` prints from it; tests/test_error_ids.cpp
// checks it against the throw sites.
#include "edm/error.hpp"

namespace edm {

namespace {

constexpr bool one = false;
constexpr bool shared = true;

#define EDM_ERROR(id, code, sites, meaning, action) ErrorIdInfo{id, code, sites, meaning, action},
constexpr ErrorIdInfo kErrorIds[] = {
#include "error/ids.def"
};
#undef EDM_ERROR

}  // namespace

std::span<const ErrorIdInfo> error_ids() { return kErrorIds; }

const ErrorIdInfo* find_error_id(std::string_view id) {
  for (const auto& e : kErrorIds)
    if (e.id == id) return &e;
  return nullptr;
}

std::string_view exit_code_meaning(int exit_code) {
  switch (exit_code) {
    case 0: return "success";
    case 1: return "other failure (a defect in edm or in a program using libedm)";
    case 2: return "campaign or command-line input";
    case 3: return "OpenCL device";
    case 4: return "file input or output";
    case 5: return "scenario plugin";
    case 6: return "physics or numerics that cannot go on";
    case 130: return "stopped on request, checkpoint written";
    default: return "unknown exit code";
  }
}

}  // namespace edm
