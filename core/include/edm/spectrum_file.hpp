// spectrum.h5, the one owner of the file (issue 29 item 1; layout in share/docs/outputs.md): one
// staged writer, SpectrumWriter, through which the run's direct spectra (/direct), `edm spectrum`'s
// time-domain spectrum and the twisted-light groups are written, and one reader, SpectrumFile,
// through which `edm info` and `edm plot` read the file back. Nothing else opens spectrum.h5.
//
// The file holds two parts, each written whole by one producer: the run's direct spectra (the
// group /direct, written by `edm run` once field.h5 is committed) and the analysis of field.h5
// (the root attributes and every other group, written by `edm spectrum`). A writer replaces its
// own part and copies the other from the spectrum.h5 already there, so edm spectrum keeps the
// run's /direct and a run that writes /direct again keeps edm spectrum's groups.
#pragma once
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/run_files.hpp"  // kRunFormat
#include "edm/spectra.hpp"

namespace edm {

// An HDF5 id (hid_t) in a public header that does not include hdf5.h (checked in spectrum_file.cpp).
using H5Id = std::int64_t;

enum class SpectrumPart {
  Analysis,  // root attributes and every group but /direct (edm spectrum, twisted light)
  Direct,    // /direct (the run's direct spectra)
};

// Builds `<file>.partial` and renames it over `<file>` once, on commit(). open() refuses a link,
// FIFO, socket, device or folder at either name (EDM-IO-142 naming it and what it is), replaces a
// regular `<file>.partial` (the leftover of a process that died: the caller holds the folder's
// lock), and checks the spectrum.h5 already there with SpectrumFile::open, so that a damaged or
// foreign file or another format is refused before any work and left as it is. The producer writes
// its part's root attributes and groups into file(); commit() copies the groups of the old file
// that are not of this part, its root attributes when the part is Direct, writes `edm_format`
// and `edm_layout`, closes and renames. A writer destroyed without commit() (an exception in the
// producer) removes its partial: the spectrum.h5 that was there is not touched.
class SpectrumWriter {
 public:
  static SpectrumWriter open(const std::filesystem::path& file, SpectrumPart part);
  SpectrumWriter(SpectrumWriter&&) noexcept;
  SpectrumWriter& operator=(SpectrumWriter&&) noexcept;
  ~SpectrumWriter();

  H5Id file() const;  // the partial, open for writing (core's writers use io/h5.hpp on it)
  const std::filesystem::path& partial() const;
  const std::filesystem::path& target() const;
  SpectrumPart part() const;
  void commit();

 private:
  struct State;
  explicit SpectrumWriter(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// --- The run's direct spectra (/direct; share/docs/outputs.md "Direct spectra") ---

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

// Writes /direct into a writer of the Direct part (Error EDM-IO-105 when the axes do not fit the sums).
void write_direct_spectra(SpectrumWriter& out, const SpectraFileInfo& info, const SpectraSums& sums);

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

// /direct's grid, checked once: ω (nω ≥ 1), direction_shape (ny, nx) and the directions (ny·nx, 3).
struct DirectGrid {
  std::size_t ny = 0, nx = 0;
  std::vector<double> omega;       // rad/s
  std::vector<double> directions;  // n̂ of direction (iy, ix) at 3·(iy·nx + ix)
  std::vector<std::string> sums;   // "coherent", "incoherent": those written
};

// --- The time-domain spectrum (edm spectrum) ---

// The root attributes and /on_axis of edm spectrum's part that `edm info` and `edm plot` show.
struct SpectrumSummary {
  double total_energy = 0, peak_omega_on_axis = 0, laser_omega = 0;  // peak NaN: no light on axis
  std::string window, field;
  std::string run_id;  // the run of the field.h5 it was computed from
  bool on_axis = false;
  double axis_ix = 0, axis_iy = 0, axis_angle = 0;
  double axis_x = 0, axis_y = 0;  // /axes/x, /axes/y at the on-axis sample (m, or rad on an angular screen)
  double line_omega = 0, line_photons_per_bw = std::nan("");
};

// spectrum.h5 opened once for reading and checked once: IoError EDM-IO-010 when it is missing or
// not HDF5, EDM-IO-142 when a FIFO, socket or device is there, EDM-IO-160 when its `edm_format` is
// not kRunFormat (naming both). The readers then name the file and the object of any damage:
// EDM-IO-011 for a group, dataset or attribute of the layout that is missing, EDM-IO-135 for one
// of another shape than the axes give, EDM-IO-073 for one that declares more than it stores,
// EDM-IO-072 for an attribute of another type.
class SpectrumFile {
 public:
  static SpectrumFile open(const std::filesystem::path& file);
  SpectrumFile(SpectrumFile&&) noexcept;
  SpectrumFile& operator=(SpectrumFile&&) noexcept;
  ~SpectrumFile();

  const std::filesystem::path& path() const;
  bool has_analysis() const;  // edm spectrum's part (the root attribute total_energy) is there
  bool has_direct() const;
  // edm spectrum's summary; nullopt without its part.
  std::optional<SpectrumSummary> summary() const;
  // /direct; nullopt without it.
  std::optional<DirectGrid> direct_grid() const;
  std::optional<DirectSpectraSummary> direct_summary() const;
  // Row iy of one sum's d²W/dωdΩ: (nx, nω), J·s/rad/sr.
  std::vector<double> direct_row(const DirectGrid& grid, const std::string& sum, std::size_t iy) const;

  // Every numeric dataset of one part, whole, in name order (the Python module's Run.spectrum and
  // Run.direct): a real one in `real`, a complex one (the {r, i} compound edm writes) in `real` and
  // `imag`, with its shape and its `unit` attribute ("" when it has none). Datasets of other types
  // (strings) are left out. IoError EDM-IO-073 as above for one that declares more than it stores.
  struct Dataset {
    std::string name;  // the path inside the file, without the leading "/": "on_axis/d2I_domega_dOmega"
    std::vector<std::size_t> shape;
    std::vector<double> real, imag;
    bool complex = false;
    std::string unit;
  };
  std::vector<Dataset> datasets(SpectrumPart part) const;

 private:
  friend class SpectrumWriter;  // copies the other part from the file it checked
  struct State;
  explicit SpectrumFile(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace edm
