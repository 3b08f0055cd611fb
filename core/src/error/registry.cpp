// The error-id registry: the table of ids.def (one line per id) and its lookup. The lowest level of
// core: it includes nothing of the rest. `edm explain` prints from it; tests/test_error_ids.cpp
// checks it against the throw sites.
#include <utility>

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
  static constexpr std::pair<int, std::string_view> kMeanings[] = {
      {0, "success"},
      {1, "other failure (a defect in edm or in a program using libedm)"},
      {2, "campaign or command-line input"},
      {3, "OpenCL device"},
      {4, "file input or output"},
      {5, "scenario plugin"},
      {6, "physics or numerics that cannot go on"},
      {7, "some cells of a campaign failed (the others ran)"},
      {8, "edm compare: the runs differ beyond --tol (not an error: the comparison ran)"},
      {130, "stopped on request, checkpoint written"},
  };
  for (const auto& [code, meaning] : kMeanings)
    if (code == exit_code) return meaning;
  return "unknown exit code";
}

}  // namespace edm
