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
};

// A harmonic "holds no energy" when its band's share of the screen-integrated spectrum ∫dI/dω dω is
// below this: the level of window leakage (Hann −85 dB eight bins from a line), where no phase can be
// read.
inline constexpr double kNoEnergyFraction = 1e-9;

struct TwistedLightResult {
  bool enabled = false;
  HarmonicBin bin = HarmonicBin::Peak;
  HarmonicMaps maps;
  ScreenObservables observables;
  GridGeometry grid;
  RingPlan rings;
  double floor_relative = 0, min_fraction = 0;
  std::vector<double> band_share;  // (nh) band energy / screen energy (of the windowed spectrum)
  // (nh, 2) ring fits: fits[h * 2 + s] holds one RingFit per radius; summary likewise.
  std::vector<std::vector<RingFit>> fits;
  std::vector<WindingSummary> summary;
  std::vector<double> floor_abs;          // (nh, 2) the amplitude floor used, V·s
  std::vector<SpeckleEnvelope> envelope;  // (nh) of the band maps /harmonics/maps
};

// Checks the ring options against the screen of field.h5 (reads the axes only), so that a bad
// option is refused before any spectrum is computed.
void check_ring_options(const std::filesystem::path& field_file, const RingOptions& rings);

// The analysis of field.h5 with the spectrum already computed from it. Throws ConfigError for the
// refusals of plan_rings and EDM-OAM-010 (a requested harmonic without energy), IoError for
// unreadable files.
TwistedLightResult compute_twisted_light(const std::filesystem::path& field_file,
                                         const SpectrumResult& spectrum, const TwistedLightOptions& options);

// Writes spectrum.h5 with the spectrum and, when enabled, the groups /harmonic_field, /observables,
// /oam and /envelope (share/docs/outputs.md). Built whole under `<file>.staging` and renamed into
// place: a failure leaves the spectrum.h5 that was there untouched.
void write_spectrum_with_twisted_light(const std::filesystem::path& file, const SpectrumResult& spectrum,
                                       const TwistedLightResult& twisted);

}  // namespace edm
