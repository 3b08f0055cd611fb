// Orbital angular momentum on the screen (share/docs/twisted_light.md): the topological charge ℓ of
// a complex harmonic map, fitted on rings about a centre, and the speckle envelope of a harmonic's
// intensity map (ring-averaged radial and azimuthal profiles). Maps are (ny, nx) row-major on the
// regular pixel grid of field.h5; azimuths are about the screen normal (harmonics.hpp).
#pragma once
#include <complex>
#include <cstddef>
#include <string>
#include <vector>

namespace edm {

// A (ny, nx) map on pixel centres x_i = x0 + i dx, y_j = y0 + j dy.
struct GridGeometry {
  std::size_t nx = 0, ny = 0;
  double x0 = 0, dx = 0, y0 = 0, dy = 0;  // m
  double x1() const { return x0 + dx * double(nx - 1); }
  double y1() const { return y0 + dy * double(ny - 1); }
};
GridGeometry grid_geometry(const std::vector<double>& x, const std::vector<double>& y);

// Interpolation of a map at (x, y) inside [x0, x1] × [y0, y1]: bicubic (Keys, a = −½: exact for
// quadratics, C¹) where the 4 × 4 stencil fits, bilinear in the outermost pixel cell.
std::complex<double> interpolate(const std::complex<double>* map, const GridGeometry& g, double x, double y);
double interpolate(const double* map, const GridGeometry& g, double x, double y);

// Where and how the rings are laid.
struct RingOptions {
  bool centre_given = false;
  double centre_x = 0, centre_y = 0;  // m (default: the axis, x = y = 0)
  std::vector<double> radii;          // m; empty = `auto_rings` radii from 0 to the largest that fits
  std::size_t auto_rings = 4;
  std::size_t points = 0;      // samples per ring; 0 = a quarter pixel apart on the largest ring
  double floor = 1e-3;         // amplitude floor, relative to the map's largest |𝒜_σ|
  double min_fraction = 0.95;  // a fit needs this fraction of its ring above the floor
  double max_residual = 0.5;   // rad: a ring whose rms phase residual is larger is not in the headline ℓ
};

// The rings on a screen: centre, radii and samples per ring. Refuses (ConfigError naming the option)
// a centre off the screen (EDM-OAM-001, --ring-centre), a ring that leaves it (EDM-OAM-002) or a
// radius that is not positive (EDM-OAM-007, --ring-radii), fewer than 8 points (EDM-OAM-003, --ring-points),
// a floor outside (0, 1) (EDM-OAM-004, --ring-floor) or a fraction outside (0, 1] (EDM-OAM-005,
// --ring-min-fraction). Auto radii on a screen too small for a ring of 2 pixels give no rings.
struct RingPlan {
  double centre_x = 0, centre_y = 0, largest_radius = 0;
  std::vector<double> radii;
  std::size_t points = 0;
};
RingPlan plan_rings(const GridGeometry& g, const RingOptions& options);

enum class RingStatus {
  Ok = 0,
  LowAmplitude = 1,  // fewer than min_fraction of the samples above the floor: refused
  NoSignal = 2,      // no sample above the floor: refused
  NoEnergy = 3,      // the harmonic's band holds no energy (a default harmonic, skipped)
  NoLine = 4,        // the band's light is not the harmonic's line (twisted_light.hpp, HarmonicLine)
};
const char* ring_status_name(RingStatus s);

// Whether a ring's fit goes into its component's headline ℓ (summarise_rings), and if not, why.
// The codes are written to spectrum.h5 (/oam/cut): append, never renumber.
enum class RingCut {
  Pass = 0,
  Refused = 1,          // the fit itself was refused or skipped (status ≠ Ok)
  BelowNoise = 2,       // less than min_fraction of the ring above the noise floor of the cube
  Residual = 3,         // rms phase residual above the cut: not a single clean vortex
  OtherWinding = 4,     // winds differently from the winding most of the other rings share
  NoCommonWinding = 5,  // passes its own cuts, but no winding is shared by more than half the rings
};
const char* ring_cut_name(RingCut c);

// The quality cuts of the headline ℓ. noise_floor is absolute (V·s): the amplitude below which the
// field cube's numerical error decides the phase (twisted_light.hpp, cube_noise_floor).
struct RingCuts {
  double noise_floor = 0;     // V·s
  double max_residual = 0.5;  // rad
  double min_fraction = 0.95;
};

struct RingFit {
  double radius = 0;
  RingStatus status = RingStatus::Ok;
  std::string message;              // why a fit was refused (empty when Ok)
  double ell_fit = 0;               // least-squares slope of the unwrapped phase against the azimuth
  int winding = 0;                  // the closed-loop phase advance / 2π (an integer by construction)
  double residual_rms = 0;          // rad, phase about the fitted line
  double fraction_above_floor = 0;  // of the ring's samples
  double mean_amplitude = 0;        // V·s over the ring
  // Phase turned per pixel pitch along the ring, |winding|·pitch/radius: the interpolation resolves
  // the vortex while it is well below 1 rad (share/docs/twisted_light.md).
  double phase_per_pixel = 0;
  std::vector<double> phase;      // unwrapped phase at each sample (NaN below the floor), rad
  std::vector<double> amplitude;  // |𝒜_σ| at each sample
  // Set by summarise_rings: whether the ring is in the headline ℓ, why not, and the fraction of its
  // samples above the noise floor.
  RingCut cut = RingCut::Pass;
  std::string cut_message;  // why the ring is not in the headline (empty when it passes or was refused)
  double fraction_above_noise = 1;
};

// Samples the map on a ring at azimuths φ_i = 2π(i + ½)/points about the normal (x = cx + r cos φ,
// y = cy + ν r sin φ), unwraps the phase along the samples above `floor_abs` (a gap is bridged by
// the principal value of the step across it) and fits ℓ. The ring must lie on the screen
// (plan_rings checks it).
RingFit fit_ring(const std::complex<double>* map, const GridGeometry& g, int normal, double cx, double cy,
                 double radius, std::size_t points, double floor_abs, double min_fraction);
// The azimuths of fit_ring's samples.
std::vector<double> ring_azimuths(std::size_t points);

// The rings of one harmonic component together. A ring is in the headline ℓ when its fit was
// accepted (status Ok), at least min_fraction of its samples lie above the noise floor, its rms
// phase residual is at most max_residual, and it has the winding that more than half of the rings
// passing those cuts share. ell is the mean ell_fit over the passing rings and ell_spread half
// their range; with no passing ring, or no winding shared by more than half, ell is NaN.
struct WindingSummary {
  double ell = 0;
  double ell_spread = 0;  // (max − min)/2 of ell_fit over the passing rings
  int winding = 0;        // the common winding (meaningful when passed > 0)
  bool consistent = false;  // every ring that passed the amplitude and residual cuts has that winding
  std::size_t accepted = 0;  // rings whose fit was accepted (status Ok)
  std::size_t passed = 0;    // rings in the headline ℓ
  std::size_t below_noise = 0, residual = 0, other_winding = 0;  // rings cut, by reason
  std::vector<int> windings;  // of the rings that passed the amplitude and residual cuts, in ring order
};
// Judges every ring against the cuts (sets fit.cut, cut_message, fraction_above_noise) and
// summarises them.
WindingSummary summarise_rings(std::vector<RingFit>& fits, const RingCuts& cuts = {});

// Speckle envelope of an intensity map (J/sr) about a centre: the mean and the contrast (std/mean)
// on rings a pixel pitch apart out to the largest ring on the screen, the azimuthal profile
// (area-weighted mean over those rings, `azimuth_bins` bins about the normal) and the envelope map
// (the radial mean at each pixel's radius; NaN beyond the largest ring).
struct SpeckleEnvelope {
  std::vector<double> radius;           // (nb) m
  std::vector<double> radial_mean;      // (nb)
  std::vector<double> radial_contrast;  // (nb)
  std::vector<double> azimuth;          // (na) rad
  std::vector<double> azimuthal_mean;   // (na)
  std::vector<double> map;              // (ny, nx)
};
SpeckleEnvelope speckle_envelope(const double* map, const GridGeometry& g, int normal, double cx, double cy,
                                 double largest_radius, std::size_t azimuth_bins = 72);

}  // namespace edm
