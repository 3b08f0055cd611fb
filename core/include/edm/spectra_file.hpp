// The direct spectra in spectrum.h5 (group /direct; layout in share/docs/outputs.md "Direct
// spectra"): the axes, the complex coherent amplitude, the coherent and incoherent d²W/dωdΩ and
// their photon units. Written under `<file>.partial` and renamed; an existing spectrum.h5 keeps its
// other groups (they are copied into the new file first).
#pragma once
#include <array>
#include <complex>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/spectra.hpp"

namespace edm {

struct SpectraFileInfo {
  std::vector<double> omega;                       // rad/s
  std::vector<std::array<double, 3>> directions;   // n̂, one per direction
  std::vector<std::size_t> direction_shape;        // how the directions lie (e.g. {ny, nx}); product = count
  std::vector<double> solid_angle;                 // sr per direction (an angular screen's cells); empty: none
  double laser_omega = 0;                          // rad/s
  SpectraSection section;                          // the [spectra] keys of the run (sum, scale, nodes, phase)
  std::string run_id, edm_version;
};

// SI products of the normalised sums (spectra_amplitude_si, spectra_density_si), laid out
// (directions…, nω[, 3]): amplitude[(i·nω + k)·3 + c] (V·s), density[i·nω + k] (J·s/rad/sr).
struct SpectraProducts {
  std::vector<std::complex<double>> coherent_amplitude;
  std::vector<double> coherent, incoherent;
};
SpectraProducts spectra_products(const SpectraSums& sums);

void write_spectra_file(const std::filesystem::path& path, const SpectraFileInfo& info, const SpectraSums& sums);

// What `edm info` shows of spectrum.h5's /direct: the grid, how it was computed, the sums'
// counters and, per sum written, the peak of the on-axis spectrum (the centre direction iy = ny/2,
// ix = nx/2, as `edm spectrum`'s centre pixel) with its photon yield there.
struct DirectSpectraSummary {
  std::size_t ny = 0, nx = 0, frequencies = 0;
  double omega_min = 0, omega_max = 0, laser_omega = 0;  // rad/s
  std::string method, sum, scale, run_id, edm_version;
  double nodes = 0, phase = 0, electrons = 0, weight_sum = 0;
  std::array<double, 3> axis_direction{};  // n̂ of the centre direction
  struct Peak {
    std::string sum;  // "coherent" or "incoherent"
    double omega = 0, d2W = 0, photons_per_bw = 0;  // rad/s, J·s/rad/sr, photons/sr per 0.1 % BW
  };
  std::vector<Peak> peaks;
};
// nullopt when the file has no /direct; IoError (EDM-IO-135 naming the file and the object) when
// /direct lacks a dataset or attribute the layout has, or its datasets disagree in shape.
std::optional<DirectSpectraSummary> read_direct_spectra_summary(const std::filesystem::path& path);

}  // namespace edm
