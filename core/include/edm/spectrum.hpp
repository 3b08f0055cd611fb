// Spectral analysis of a run folder (`edm spectrum`): windowed FFT along time of every pixel of
// field.h5, the far-field spectrum d²I/dωdΩ, its screen integral, harmonic maps, the Poynting
// fluence per pixel and the energy through the screen. Results go to RUN/spectrum.h5 (atomic).
// field.h5 is read in slabs of rows, so memory stays bounded for a 401×401×1666 cube.
#pragma once
#include <array>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "edm/kinematics.hpp"
#include "edm/spectrum_file.hpp"

namespace edm {

class FieldFile;  // field_file.hpp

// ---------------------------------------------------------------------------------------------
// Conventions (so that the numbers compare with frequency-domain codes, e.g. Jackson §14.5 in SI):
//
//   Ẽ(ω) = (1/√(2π)) ∫ E(t) e^{iωt} dt                      (unitary, physics sign; |Ẽ| is all
//                                                              that is stored, so the sign is moot)
//   d²I/dωdΩ = 2 ε0 c R² |Ẽ(ω)|²      for ω ≥ 0, in J·s/rad/sr
//
// so that ∫_0^∞ d²I/dωdΩ dω = ε0 c R² ∫ |E|² dt = dW/dΩ (one-sided spectrum, both signs of ω folded
// onto ω ≥ 0). R = |r| is the distance of the pixel centre from the origin (the interaction point),
// E the vector field (all three components). On the sampled grid t_j = t_0 + j·dt (N samples),
// ω_k = 2πk/(N·dt) for k = 0 … ⌊N/2⌋ and
//
//   d²I/dωdΩ(ω_k) = (ε0 c R² dt² / π) · Σ_c |Σ_j w_j E_c(t_j) e^{iω_k t_j}|²
//
// with the window w_j. Discrete Parseval then holds exactly: Σ_k g_k d²I/dωdΩ(ω_k) Δω =
// ε0 c R² Σ_j w_j² |E(t_j)|² dt, with Δω = 2π/(N dt) and g_k = 1/2 at k = 0 and at the Nyquist bin
// (N even), 1 elsewhere. The same weights are used for every band integral below.
//
// Field used: E_far (the 1/R radiation part alone) when field.h5 is split mode, else the total E —
// the total field also holds the velocity (Coulomb-like) field, which is negligible far from the
// charges but not zero; spectrum.h5 records which one in the attribute `field`.
//
// Windows (symmetric, peak 1 in the middle, ends 0 except `none`): Hann, 4-term Blackman–Harris
// (92 dB). No renormalisation of the stored spectra: a windowed spectrum is that of w(t)E(t), so a
// pulse in the middle of the window keeps its peak amplitude; the window's power gain mean(w²) and
// coherent gain mean(w) are recorded. Energies and Parseval are exact only with window `none`.
//
// Absolute numbers (the photon yield at the line, d²W/dωdΩ there) never come from a windowed
// spectrum: for a transient pulse the windowed |Ẽ|² at the pulse is scaled by w(t_c)² at the
// pulse's time t_c, not by a fixed gain (mean(w) or mean(w²) are right for a stationary signal
// only), and a pulse off the window's centre (the run's window is fixed from the electrons, not
// from the light) is attenuated by a factor that no constant gain captures. The on-axis sample is
// therefore also transformed without a window (on_axis_unwindowed): the run's window holds the
// pulse, so the field is ~0 at its ends and the plain DFT has no truncation to hide; the headline
// numbers come from it whatever --window says. The windowed value divided by w(t_c)², t_c the
// energy-weighted time Σ t|E|²/Σ|E|² of that sample, is kept beside it as a cross-check (it agrees
// to the extent that w² is linear across the pulse).
//
// Fluence: F = ∫ S·n̂ dt with S = E×B/μ0 and n̂ = sign(screen_z)·ẑ (the screen normal pointing away
// from the interaction, so outgoing energy is positive), from the same buckets as the spectrum
// (E_far × B_far in split mode, E × B in total mode), summed as Σ_j S·n̂ dt. Total energy through the
// screen = Σ_pixels F · dx·dy: each pixel owns a dx × dy cell centred on it (dx = pixel pitch).
// Pixel solid angle: ΔΩ = dx·dy·|z|/R³ (projected area over R², small-pixel limit). Screen-integrated
// spectrum dI/dω = Σ_pixels d²I/dωdΩ · ΔΩ in J·s/rad.
// ---------------------------------------------------------------------------------------------

enum class Window { Hann, BlackmanHarris, None };
// "hann" | "blackman-harris" | "none"; throws ConfigError EDM-SPEC-001 naming the value.
Window parse_window(const std::string& name);
const char* window_name(Window w);
// The N window weights (symmetric: w_j = f(j/(N−1)); N = 1 gives {1}).
std::vector<double> window_weights(Window w, std::size_t n);

// What the harmonic maps count in: the laser carrier ω, or the expected on-axis line ω_1 of the run
// (expected_line_omega below).
enum class HarmonicBase { Laser, Line };
HarmonicBase parse_harmonic_base(const std::string& name);  // "laser" | "line"; EDM-SPEC-002
const char* harmonic_base_name(HarmonicBase b);
// ω (1+β)/(1−β) / (1 + a0²/2): the on-axis line of a head-on beam of Lorentz factor γ, with
// (1+β)/(1−β) = γ²(1+β)² so a large γ loses no digits.
double backscatter_line_omega(double laser_omega, double gamma, double a0);

// The physics of a run the analysis needs, from its RunManifest (run.toml): [laser] omega and a0 (the
// effective a0), the side of the screen, and the initial ensemble's kinematics ([kinematics],
// kinematics.hpp), which the driver records for every scenario.
struct RunPhysics {
  std::string scenario;
  double laser_omega = 0;  // rad/s
  double a0 = 0;
  double gamma = 0;     // mean initial γ of the ensemble ([kinematics] gamma_mean); 0 = not recorded
  int screen_side = 0;  // sign of the screen's z: the on-axis pixel looks along screen_side·ẑ; 0 = none
  EnsembleKinematics kinematics;  // electrons = 0: the run recorded no initial ensemble
  // run.toml [window] emission_in_window: false when the window cuts light that every spectrum of
  // the field needs (share/docs/campaign.md, "The burst, and windows that miss it"); true where the
  // run did not judge it (its spectra are not computed from the samples).
  bool emission_in_window = true;
};
class RunManifest;
class RunFolder;
// Throws what the manifest's accessors throw (edm/run_manifest.hpp), naming run.toml and the key.
RunPhysics read_run_physics(const RunManifest& manifest);
// RunManifest::read of the folder, then the above: for a caller that holds no RunManifest yet.
RunPhysics read_run_physics(const RunFolder& run);

// The on-axis fundamental the run should show, rad/s, for `--of line` (share/docs/outputs.md):
//   ω_1 = ω_L h / (⟨γ⟩ − n̂·⟨u⟩),  n̂ = σ ẑ (σ = screen_side), averaged over a carrier period in the
// pulse, with the light-front momentum h = γ − s u_z conserved (s = laser direction). With
// ⟨u_⊥²⟩ = u_⊥0² + a0²/2 (edm's a0 gives |a_⊥|² = a0²/2 on average for linear and circular
// polarisation alike): looking along the laser (σ = s) ω_1 = ω_L; looking back at its source
// (σ = −s) ω_1 = ω_L h² / (1 + u_⊥0² + a0²/2), which is backscatter_line_omega for a head-on beam.
// gamma > 0 overrides the run: the backscatter line of a head-on beam of that γ. a0 ≥ 0 overrides
// the run's a0. Throws ConfigError EDM-SPEC-022 when the run records no kinematics and no γ.
double expected_line_omega(const RunPhysics& physics, double gamma = 0, double a0 = -1);
// Whether expected_line_omega can answer without a γ override.
bool line_known(const RunPhysics& physics);

// The sample of a grid nearest the screen axis: the one place that says which pixel or direction is
// "on axis" (edm spectrum's on-axis spectrum and photon yield, edm info's time-domain and direct
// spectra). `directions` holds ny·nx unit vectors n̂ (row-major, iy·nx + ix), `axis` the unit axis.
// The angle of each sample from the axis is atan2(|n̂×a|, n̂·a); the smallest wins, and angles within
// 1e-12 rad of each other tie, won by the first in row order (smallest iy, then ix), so a symmetric
// grid with no sample on the axis (16² with endpoints) always gives the same one of its four
// nearest. The sample is on the axis when its angle is at most kOnAxisPitchFraction of the grid's
// pitch there, the smallest non-zero angle to its grid neighbours (1e-12 rad for a single sample):
// a grid's rounding puts an axis sample far inside that, half a pitch (the corner between four
// samples) far outside.
constexpr double kOnAxisPitchFraction = 0.01;
// edm spectrum warns that the record cuts the pulse when more than this share of the on-axis
// sample's energy lies in its outer 1/32 at either end (edm run's window holds the light with
// margins: a pulse inside it leaves orders of magnitude less there).
constexpr double kEdgeEnergyWarning = 1e-4;
struct AxisSample {
  std::size_t ix = 0, iy = 0;
  double angle = 0;      // rad from the axis
  double tolerance = 0;  // rad
  bool on_axis = false;  // angle ≤ tolerance
};
AxisSample nearest_axis_sample(const std::vector<double>& directions, std::size_t nx, std::size_t ny,
                               const std::array<double, 3>& axis);
// How every tool names that sample: "direction ix=7, iy=7, the nearest to the axis, 9.43 mrad off
// it" or "pixel ix=8, iy=8 at (0, 0) mm, on the axis"; a flat screen (flat = true) gives the
// pixel's position x, y (m) in mm.
std::string axis_sample_text(const AxisSample& s, bool flat, double x = 0, double y = 0);
// A flat screen's pixels (x, y at z) as unit directions from the origin, and its axis sign(z)·ẑ.
std::vector<double> flat_screen_directions(const std::vector<double>& x, const std::vector<double>& y, double z);

// A harmonic n·ω_1 of the run's line above the Nyquist frequency, folded back into [0, Nyquist]
// by the sampling. relative_power is the estimate of its power against the fundamental
// (edm/coverage.hpp harmonic_power_estimate): harmonics below kAliasPowerFloor are not listed.
constexpr double kAliasPowerFloor = 1e-6;
struct AliasedHarmonic {
  int order = 0;
  double omega = 0, alias_omega = 0, relative_power = 0;  // rad/s, rad/s, fraction
};
// The listed harmonics n ≥ 1 of `line_omega` whose n·ω_1 exceeds `nyquist` (significant_harmonics
// with kAliasPowerFloor; at most 64).
std::vector<AliasedHarmonic> aliased_harmonics(double line_omega, double a0, double nyquist);

struct SpectrumOptions {
  Window window = Window::Hann;
  std::vector<int> harmonics;  // orders n ≥ 1 of the maps; empty = no maps
  HarmonicBase of = HarmonicBase::Laser;
  double band = 0.5;                                // half-width of each band in units of the base ω
  double gamma = 0;                                 // > 0 overrides the manifest's γ (for --of line)
  double a0 = -1;                                   // ≥ 0 overrides the manifest's a0
  std::size_t slab_bytes = std::size_t(256) << 20;  // field.h5 read budget per slab (all 6 components)
  unsigned threads = 0;                             // rows of a slab in parallel; 0 = all hardware threads.
                                                    // Results are bit-identical for every value.
};

struct SpectrumResult {
  // Axes.
  std::vector<double> omega;  // ω_k, rad/s, k = 0 … ⌊N/2⌋
  std::vector<double> x, y;   // pixel centres, m
  std::size_t nx = 0, ny = 0, samples = 0;
  double dt = 0, screen_z = 0;        // s, m
  double pixel_dx = 0, pixel_dy = 0;  // m (0 on a 1-pixel axis: the total energy is then NaN)
  double nyquist_omega = 0;           // π/dt
  double laser_omega = 0;             // rad/s
  std::string field_used;             // "E_far" or "E"
  // An angular screen (share/docs/outputs.md, "The angular screen"): x, y are the grid's angles
  // (rad), pixel_dx, pixel_dy their spacings (rad), screen_z the sphere's radius R (inf at
  // infinity, where the field is R·E and d²I/dωdΩ = 2 ε0 c |R·Ẽ|² takes no R²), the solid angles
  // the grid's own cells, the fluence ∫ (E×B/μ0)·n̂ dt along each direction (J/m² on the sphere,
  // J/sr at infinity) and the "on-axis" direction the one nearest the screen axis.
  bool angular = false, far_field = false;
  std::string screen_angles, screen_axis;  // "xy" | "polar"; "z" | "-z" | "x" | …
  std::vector<double> direction;           // (ny, nx, 3) unit vectors n̂
  std::string run_id, mode;
  Window window = Window::Hann;
  double window_power_gain = 1, window_coherent_gain = 1;

  // The sample nearest the axis (nearest_axis_sample): the on-axis spectrum and its peak (k ≥ 1,
  // bin centre). No light there (a zero spectrum): the peaks are NaN.
  std::size_t center_ix = 0, center_iy = 0;
  AxisSample axis;
  std::vector<double> on_axis;    // d²I/dωdΩ, J·s/rad/sr (windowed)
  std::vector<double> on_axis_unwindowed;  // the same sample without a window: the absolute numbers
  double pulse_sample = 0;             // Σ j|E_j|²/Σ|E_j|² of that sample (fractional index; NaN: no light)
  double window_gain_at_pulse = 1;     // w(t_c)² of the analysis window there (1 with no light)
  // The share of that sample's Σ|E|² in the record's outer 1/32 at each end: the unwindowed
  // spectrum is the pulse's only when the record holds it (share/docs/outputs.md warns above
  // kEdgeEnergyWarning).
  double edge_energy_fraction = 0;
  double peak_omega_on_axis = 0;  // rad/s
  // The lowest ω the on-axis peak was looked for at: half the run's line where it has one (below, a
  // field that does not vanish at the record's ends peaks at ω → 0), else 0.
  double peak_search_from = 0;
  // The same peak refined between bins by a parabola through the logarithms of the three bins around
  // it (exact for a Gaussian line shape, close for the Hann/Blackman–Harris main lobes).
  double peak_omega_on_axis_interp = 0;  // rad/s

  std::vector<double> integrated;  // dI/dω over the screen, J·s/rad
  std::vector<double> cut_x;       // (nx, nω): d²I/dωdΩ along the centre row, J·s/rad/sr

  // Per pixel, (ny, nx), row-major.
  std::vector<double> fluence;          // ∫ S·n̂ dt, J/m²
  std::vector<double> spectral_energy;  // ∫_0^∞ d²I/dωdΩ dω, J/sr (= time-domain energy for `none`)
  std::vector<double> solid_angle;      // ΔΩ, sr
  std::vector<double> peak_omega;       // argmax over k ≥ 1 of d²I/dωdΩ, rad/s
  double total_energy = 0;              // Σ fluence · dx·dy, J
  double integrated_energy = 0;         // ∫ dI/dω dω (windowed), J

  // Harmonic maps: (nh, ny, nx) of ∫ d²I/dωdΩ dω over [n ω_b − band ω_b, n ω_b + band ω_b], J/sr.
  HarmonicBase of = HarmonicBase::Laser;
  double base_omega = 0, band = 0;  // rad/s, fraction of base_omega
  std::vector<int> harmonic_orders;
  std::vector<double> harmonic_omega;  // n ω_b, rad/s
  std::vector<double> harmonic_maps;

  // The run's line (expected_line_omega, or the --gamma/--a0 one when the harmonics are of it; 0 =
  // not known) and its harmonics that alias (aliased_harmonics).
  double line_omega = 0;
  std::vector<AliasedHarmonic> aliased;
  // The photon yield at the line (photon_yield.hpp on_axis_line_yield: unwindowed), NaN when unknown.
  double line_photons_per_bw = std::nan("");
};

// Analyses RUN/field.h5 with the physics of RUN/run.toml. A requested harmonic whose band reaches
// above the Nyquist frequency π/dt is ConfigError EDM-SPEC-020 naming the harmonic (it would alias;
// it is never folded back). Throws IoError for unreadable files.
SpectrumResult compute_spectrum(const RunFolder& run, const SpectrumOptions& options);
// Same, on a field file already open (its layout checked by FieldFile::open) with the physics given
// (no run.toml needed): the library entry point the one above wraps.
SpectrumResult compute_spectrum(const FieldFile& field, const RunPhysics& physics, const SpectrumOptions& options);

// Writes edm spectrum's part of spectrum.h5 into a writer of SpectrumPart::Analysis (the caller
// commits; edm/spectrum_file.hpp). Layout (all SI):
//   /axes/omega (nω, rad/s), /axes/x (nx, m), /axes/y (ny, m),
//   /axes/theta_x (nx, rad) = atan2(x, |z|), /axes/theta_y (ny, rad)
//   /on_axis/d2I_domega_dOmega (nω, J·s/rad/sr, windowed), /on_axis/d2I_domega_dOmega_unwindowed,
//     attributes ix, iy, angle (rad from the axis), on_axis (1/0), peak_omega, peak_omega_interp
//     (NaN: no light), pulse_sample, window_gain_at_pulse, edge_energy_fraction
//   /integrated/dI_domega (nω, J·s/rad)
//   /cut_x/d2I_domega_dOmega (nx, nω) along the centre row
//   /pixel/{fluence (J/m²), spectral_energy (J/sr), solid_angle (sr), peak_omega (rad/s)} (ny, nx)
//   /harmonics/{maps (nh, ny, nx, J/sr), order (nh), omega (nh, rad/s)}, attributes of, base_omega, band
//   root attributes: convention, field, window, window_power_gain, window_coherent_gain, dt,
//   nyquist_omega, laser_omega, screen_z, pixel_dx, pixel_dy, total_energy, integrated_energy,
//   peak_omega_on_axis (NaN: no light on axis), run_id, mode, edm_version; line_omega (0: unknown),
//   aliased_orders, aliased_omega, alias_omega (rad/s; empty: none), alias_power_floor,
//   line_photons_per_bw (the unwindowed yield at the line, NaN: none); the writer adds edm_format and
//   edm_layout. SpectrumFile::summary reads back what `edm info` shows.
// An angular screen (result.angular): /axes/x, /axes/y and the angles under field.h5's names in rad,
// /axes/direction (ny, nx, 3), no theta_x = atan2(x, |z|); root attributes add screen_type,
// screen_angles, screen_axis, far_field (share/docs/outputs.md, "edm spectrum of an angular run").
void write_spectrum(SpectrumWriter& out, const SpectrumResult& result);

}  // namespace edm
