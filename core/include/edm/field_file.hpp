// field.h5 read back: the one owner of its layout on the read side (share/docs/outputs.md, "field.h5";
// the writer is FieldWriter, writer.hpp). A FieldFile is opened once and holds the HDF5 handle; the
// whole layout is checked at open (format version, every bucket's components of one shape, the axes'
// lengths, the attributes' types), so that a reader never meets damage half way through a pass.
// The format version is kRunFormat (for now in spectrum_file.hpp; it moves to run_files.hpp).
// Geometry (with the one Nyquist formula, π/dt), the root attributes (summary), rows of a component
// and 1-D datasets are read through it; no other file spells a field.h5 dataset path.
#pragma once
#include <array>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace edm {

// What field.h5's root attributes and small datasets say about the run (edm info, edm plot).
struct FieldFileSummary {
  std::string run_id, edm_version, scenario, mode;
  double electron_count = 0, screen_z = 0, window_clipped_electrons = 0;
  std::string screen_type = "flat";  // "angular": x, y are angles (rad) and screen_z the radius (inf: far field)
  std::size_t nx = 0, ny = 0, samples = 0;
  double t_first = 0, t_last = 0;                     // s, /axes/t
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;  // m, pixel centres
  std::vector<std::string> buckets;                   // "E", "B", "E_far", "B_far" present
  bool has_gamma = false;
  double gamma_mean_first = 0, gamma_mean_last = 0;  // ensemble mean γ at the ends of /gamma/mean
};

// The screen and time grid of the field datasets, all in SI as field.h5 stores them.
struct FieldGeometry {
  std::size_t nx = 0, ny = 0, samples = 0;  // every component is (ny, nx, samples)
  std::vector<double> t;                    // s, /axes/t: the absolute observer time
  std::vector<double> x, y;                 // m (flat) or rad (angular: the grid's two angles)
  double dt = 0;                            // s, (t_last − t_first)/(samples − 1); 0 with one sample
  double nyquist_omega = 0;                 // rad/s, π/dt (0 with one sample)
  double pixel_dx = 0, pixel_dy = 0;        // spacing of x, y (0 with one pixel)
  double screen_z = 0;                      // m: flat screen's signed distance; angular: radius (inf: far field)
  bool angular = false, far_field = false;
  std::string screen_angles = "xy", screen_axis = "z";  // angular only
  bool split = false;  // the run's mode is split: E_far, B_far beside E, B
  bool potential = false;  // the run's mode is potential: /A/{x,y,z} and /A0 = φ/c (V·s/m) instead of the fields
  // Angular only: the directions n̂ (ny, nx, 3) and their cells' solid angles (ny, nx, sr).
  std::vector<double> direction, solid_angle;
};

// The field buckets as FieldWriter numbers them (screen.hpp bucket_name): E, B, E_far, B_far.
enum FieldBucket : int { kBucketE = 0, kBucketB = 1, kBucketEFar = 2, kBucketBFar = 3 };

class FieldFile {
 public:
  // Opens and checks `file`. IoError naming the file (and the dataset or attribute) on every kind of
  // damage, one id per kind: EDM-IO-010 missing or not HDF5, EDM-IO-142 a FIFO/socket/device,
  // EDM-IO-160 another format version (or none: an older edm or another tool), EDM-IO-011 a dataset
  // or attribute missing, EDM-IO-071 a wrong shape or inconsistent axes, EDM-IO-070 a dataset not of
  // floating point, EDM-IO-072 an attribute of the wrong type, EDM-IO-073 fewer elements stored
  // than declared.
  static FieldFile open(const std::filesystem::path& file);
  FieldFile(FieldFile&&) noexcept;
  FieldFile& operator=(FieldFile&&) noexcept;
  ~FieldFile();

  const std::filesystem::path& path() const;
  const FieldGeometry& geometry() const;
  const FieldFileSummary& summary() const;

  // Rows [iy0, iy1) of one component (comp 0, 1, 2 = x, y, z) of a bucket present into out, resized to
  // (iy1 − iy0)·nx·samples, SI. The buckets the spectrum integrates are (kBucketEFar, kBucketBFar)
  // when geometry().split, else (kBucketE, kBucketB).
  void read_rows(int bucket, int comp, std::size_t iy0, std::size_t iy1, std::vector<double>& out) const;
  // Rows of the four-potential (mode potential): comp 0, 1, 2, 3 = A_x, A_y, A_z, A⁰ = φ/c, V·s/m.
  // EDM-IO-011 naming the mode in a file of the fields.
  void read_potential_rows(int comp, std::size_t iy0, std::size_t iy1, std::vector<double>& out) const;
  static std::string potential_name(int comp);  // "/A/x", "/A/y", "/A/z", "/A0"
  // The same, addressed by the dataset's name ("/E/x", "/A0"): for tests and tools.
  std::vector<double> component(const std::string& name) const;
  // "/E/x" for (kBucketE, 0): the name a message gives.
  static std::string component_name(int bucket, int comp);
  // A 1-D dataset (/gamma/*, /axes/*): IoError as above when it is missing, not 1-D or not float.
  std::vector<double> dataset_1d(const std::string& name) const;
  bool has(const std::string& name) const;

 private:
  struct Impl;
  explicit FieldFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// For tests and tools: one component of `file` (FieldFile::open, then component), with its shape.
std::vector<double> read_field_component(const std::filesystem::path& file, const std::string& name,
                                         std::size_t* ny = nullptr, std::size_t* nx = nullptr,
                                         std::size_t* ns = nullptr);
// Every element of a numeric dataset of any HDF5 file edm writes (field.h5, spectrum.h5), flattened
// in storage order, for tests and tools; no format check (spectrum.h5 has its own owner).
std::vector<double> read_dataset_1d(const std::filesystem::path& file, const std::string& name);

}  // namespace edm
