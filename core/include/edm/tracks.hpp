// External trajectories for the "tracks" model: an HDF5 file with one group per electron,
//   /tracks/<index as 6 digits>/{t, x, y, z, ux, uy, uz}   (1-D float64 datasets, SI, u = γβ)
//   /tracks/<index as 6 digits>/w                          (optional: the macro-particle weight, a
//                                                           scalar or 1-element float dataset; 1 if absent)
// read in index order. Errors (IoError) name the file and the dataset. hdf5.h stays private to core.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace edm {

struct TrackData {
  std::uint64_t index = 0;                     // from the group name
  std::vector<double> t, x, y, z, ux, uy, uz;  // SI (s, m, γβ), strictly increasing t
  double w = 1;                                // macro-particle weight, finite and >= 0
};

std::vector<TrackData> read_tracks(const std::string& path);

// Writes tracks in the same layout (group name = index as 6 digits), replacing the file: exports
// trajectories for other tools and builds test inputs. Writes the columns as given (no validation:
// read_tracks is the gate; w is written only when it is not 1). Throws IoError naming the file and dataset.
void write_tracks(const std::string& path, const std::vector<TrackData>& tracks);

}  // namespace edm
