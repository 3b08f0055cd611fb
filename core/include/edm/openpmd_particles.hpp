// openPMD particle input (trajectory.model = "openpmd"): reads one particle species of an openPMD
// 1.x series in HDF5 — file-based (one file per iteration, trajectory.file = "…/data%T.h5" or any
// one file of the series) or group-based (one file, /data/<iteration>/) — and assembles one track
// per particle id across the iterations, in SI, ready for the tracks model (edm/tracks.hpp).
// Records read: position and positionOffset (x, y, z; SI = position·unitSI + positionOffset·unitSI),
// momentum (x, y, z; divided by weighting^weightingPower when macroWeighted, then by m_e c), weighting
// (optional, 1 when absent) and id. unitDimension is checked against what each record must be;
// constant record components (attributes value and shape) are read like datasets. The iteration time
// is (time + the position record's timeOffset)·timeUnitSI. share/docs/ensembles.md states the rules.
//
// Refused, with an IoError naming the file (and the particle, record or iteration): a series that is
// not openPMD, no iterations, no particles, a missing record or component, a record of the wrong
// dimension, a particle that skips an iteration between its first and last (a gap), a track whose
// time step varies, a track of fewer than 4 samples, a weighting that changes between iterations,
// non-finite values. A species that is not in the series is a ConfigError naming trajectory.species.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "edm/tracks.hpp"

namespace edm {

struct OpenPmdTracks {
  std::vector<TrackData> tracks;   // ordered by particle id; TrackData::index = position in that order
  std::vector<std::uint64_t> ids;  // the openPMD id of each track
  std::string species;             // the species read
  std::vector<std::uint64_t> iterations;  // the series' iterations, in order
};

// `species` empty: the series must hold exactly one particle species.
OpenPmdTracks read_openpmd_tracks(const std::string& path, const std::string& species = "");

// The files the series that `path` names is read from, in iteration order (one file for a
// group-based series); IoError as read_openpmd_tracks for a series it cannot list. Ranks under
// mpirun compare their contents before a run (run/ranks.cpp).
std::vector<std::filesystem::path> openpmd_series_files(const std::string& path);

}  // namespace edm
