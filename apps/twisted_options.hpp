// Options of the twisted-light analysis for `edm spectrum` and `edm plot` (rings for the topological
// charge, the amplitude floor, --no-oam), the one call that computes the spectrum with it and writes
// spectrum.h5 whole, and the summary `edm spectrum` prints (share/docs/twisted_light.md).
#pragma once
#include <boost/program_options.hpp>
#include <filesystem>
#include <ostream>
#include <string>

#include "analysis_options.hpp"
#include "edm/twisted_light.hpp"

namespace edm::app {

struct TwistedArgs {
  std::string ring_centre, ring_radii, harmonic_bin = "peak";
  long long ring_points = 0;  // signed: boost reads "-5" into an unsigned as 4294967291
  double ring_floor = 1e-3, ring_min_fraction = 0.95;
  double ring_max_residual = 0.5;  // rad: --ring-max-residual
  bool no_oam = false;
};
void add_twisted_options(boost::program_options::options_description& desc, TwistedArgs& a);
// Parses the text options; throws ConfigError naming the option (EDM-CLI-030 --ring-centre,
// EDM-CLI-031 --ring-radii).
TwistedLightOptions resolve_twisted_options(const TwistedArgs& a, const AnalysisArgs& analysis);

struct AnalysisProducts {
  SpectrumResult spectrum;
  TwistedLightResult twisted;
  RunPhysics physics;  // RUN/run.toml's physics (read_run_physics), read once for the callers too
  std::filesystem::path spectrum_file;  // the spectrum.h5 written (RunFolder::spectrum)
};
// compute_spectrum, then compute_twisted_light, then spectrum.h5 (write_spectrum_with_twisted_light):
// every refusal comes before anything is written, and the ring options are checked before the
// spectrum is computed.
AnalysisProducts analyse_run(const std::filesystem::path& dir, const AnalysisArgs& analysis,
                             const TwistedArgs& twisted);

// Fitted ℓ per harmonic and circular component, refused rings, L_z and J per photon.
void print_twisted_summary(std::ostream& out, const SpectrumResult& r, const TwistedLightResult& t);

}  // namespace edm::app
