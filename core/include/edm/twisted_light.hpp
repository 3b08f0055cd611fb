// The twisted-light analysis of a run folder (`edm spectrum`, share/docs/twisted_light.md): one pass
// over field.h5 that gives the complex harmonic maps (harmonics.hpp) and the screen observables per
// bin (observables.hpp), then the topological charge on rings and the speckle envelope (oam.hpp).
// It runs after compute_spectrum, whose harmonic bands, window and integrated spectrum it uses, and
// its results go into the same spectrum.h5, written whole or not at all.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "edm/harmonics.hpp"
#include "edm/oam.hpp"
#include "edm/observables.hpp"
#include "edm/spectrum.hpp"

namespace edm {

struct TwistedLightOptions {
  bool enabled = true;
  RingOptions rings;
  HarmonicBin bin = HarmonicBin::Peak;
  // The harmonics were asked for by name (--harmonics): one without energy is then refused
  // (EDM-OAM-010 naming --harmonics); a default harmonic without energy is kept, marked NoEnergy.
  bool harmonics_explicit = false;
  std::size_t slab_bytes = std::size_t(256) << 20;  // field.h5 read budget per slab
  unsigned threads = 0;                             // rows in parallel; results do not depend on it
  // The run's trajectory.knots_per_period (RunManifest::knots_per_period), which sets the cube's
  // estimated error (cube_relative_error); 0: not known (a field computed in closed form).
  int knots_per_period = 0;
  // The run's physics (read_run_physics): the laser, its a0, the screen's side and the initial
  // ensemble's kinematics, from which each harmonic's line range on this screen follows
  // (HarmonicLine). kinematics.electrons = 0 (not known): the bands are not judged.
  RunPhysics physics;
};

// Whether a harmonic's band holds that harmonic's line. Harmonic n of the emission falls at
//   n ω_1(θ, M) = n ω_L 2h² / [(h² + M) − q cos θ (M − h²)],   q = ν s,
// at angle θ from the axis (h the light-front momentum, s the laser direction, ν the screen side,
// M = 1 + u_⊥0² + a²/2 with a from 0 in the envelope's wings to a0 at its peak): on this screen it
// lies between the extremes over θ ∈ [0, θ_max of the pixels] and a ∈ [0, a0] (the redshift of
// the a0² term and of the angle included), widened by n times the half width at half maximum of the
// fundamental in the screen spectrum and at least kLineMarginBins bins. A band whose peak bin lies
// outside that range holds another line's tail or leakage, not this harmonic: NoLine, and no J_z
// or ℓ is given for it (share/docs/twisted_light.md, "Bands without a line").
enum class HarmonicLine { NotJudged = -1, NoLine = 0, Line = 1 };
inline constexpr double kLineMarginBins = 2;

// A harmonic "holds no energy" when its band's share of the screen-integrated spectrum ∫dI/dω dω is
// below this: the level of window leakage (Hann −85 dB eight bins from a line), where no phase can be
// read.
inline constexpr double kNoEnergyFraction = 1e-9;

// The field cube's numerical error, relative to the peak of its strongest harmonic map, from the
// run's trajectory.knots_per_period k. Measured on thomson_lg (32 electrons, 21² pixels, harmonics
// 1–3) against k = 64 with 4 Newton steps: the worst pixel of any map is off by 7.4e-6 of the
// strongest map's peak at k = 16, 3.3e-7 at k = 32 (k⁻⁴·⁵), and 2e-15 at k = 64 with 2 Newton
// steps instead of 4 (the retarded-time solve adds nothing); the spectra of BENCHMARKS.md fall as
// k⁻⁶ from 8 to 16 knots. The model is kCubeErrorAt16 · (16/k)⁴ above 16 knots and (16/k)⁶ below,
// the slower of the two measured rates on each side (share/docs/twisted_light.md, "The noise
// floor"). k = 0 (a run.toml that records no knots, e.g. a field computed in closed form) gives the
// round-off of field.h5, kCubeRoundoff.
inline constexpr double kCubeErrorAt16 = 8e-6;
inline constexpr double kCubeRoundoff = 1e-11;
double cube_relative_error(int knots_per_period);
// The noise floor of the headline ℓ is kNoiseMargin × cube_relative_error × the strongest map's
// peak (over the harmonics asked for and the screen-integrated spectrum's peak bin, so that it does
// not depend on which harmonics are asked for): a sample at the floor has its phase off by at most asin(1/4) ≈ 0.25 rad where the error is
// worst.
inline constexpr double kNoiseMargin = 4;

struct TwistedLightResult {
  bool enabled = false;
  HarmonicBin bin = HarmonicBin::Peak;
  HarmonicMaps maps;
  ScreenObservables observables;
  GridGeometry grid;
  RingPlan rings;
  double floor_relative = 0, min_fraction = 0;
  // The quality cuts of the headline ℓ (oam.hpp, summarise_rings): the run's knots per period (0 =
  // not recorded), the cube's estimated relative error, the strongest map's peak over every harmonic
  // and component (V·s), the absolute noise floor they give (V·s) and the residual cut (rad).
  int knots_per_period = 0;
  double cube_relative_error = 0, strongest_peak = 0, noise_floor = 0, max_residual = 0;
  std::vector<double> band_share;  // (nh) band energy / screen energy (of the windowed spectrum)
  // (nh) HarmonicLine, and the range of ω (rad/s, widened by the margin) where the harmonic's line
  // can peak on this screen (NaN when not judged).
  std::vector<HarmonicLine> line;
  std::vector<double> line_omega_min, line_omega_max;
  std::vector<double> band_peak_omega;  // (nh) ω of the band's peak bin, rad/s (NaN when not judged)
  // (nh, 2) ring fits: fits[h * 2 + s] holds one RingFit per radius; summary likewise.
  std::vector<std::vector<RingFit>> fits;
  std::vector<WindingSummary> summary;
  std::vector<double> floor_abs;          // (nh, 2) the amplitude floor used, V·s
  std::vector<SpeckleEnvelope> envelope;  // (nh) of the band maps /harmonics/maps
};

// Checks the ring options against the screen of field.h5 (reads the axes only), so that a bad
// option is refused before any spectrum is computed.
void check_ring_options(const FieldFile& field, const RingOptions& rings);

// The analysis of field.h5 with the spectrum already computed from it. The noise floor of the
// headline ℓ takes the knots per period from the run.toml beside field.h5 ([config]; none there:
// the round-off floor). Throws ConfigError for the
// refusals of plan_rings and EDM-OAM-010 (a requested harmonic without energy), IoError for
// unreadable files.
TwistedLightResult compute_twisted_light(const FieldFile& field, const SpectrumResult& spectrum,
                                         const TwistedLightOptions& options);

// Writes the spectrum and, when enabled, the groups /harmonic_field, /observables, /oam and
// /envelope (share/docs/outputs.md) into a writer of SpectrumPart::Analysis; the caller commits it
// (one rename; a failure leaves the spectrum.h5 that was there untouched).
void write_spectrum_with_twisted_light(SpectrumWriter& out, const SpectrumResult& spectrum,
                                       const TwistedLightResult& twisted);

}  // namespace edm
