// Options shared by the analysis subcommands (`edm spectrum`, `edm plot`): window, harmonic orders
// ("1,3,5"), harmonic base, band, γ override, parsed into edm::SpectrumOptions, and the default
// harmonic choice when none is asked for.
#pragma once
#include <boost/program_options.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "edm/spectrum.hpp"

namespace edm::app {

struct AnalysisArgs {
  std::string window = "hann", harmonics, of;
  double band = 0.5, gamma = 0, a0 = -1;
  unsigned threads = 0;
};
void add_analysis_options(boost::program_options::options_description& desc, AnalysisArgs& a);
// "1,3,5" → {1, 3, 5}; throws ConfigError EDM-CLI-020 naming the bad entry.
std::vector<int> parse_harmonic_list(const std::string& text);
// Without --harmonics: orders 1–3 that fit under Nyquist, of the line when the run records its
// ensemble's kinematics (every run since [kinematics] exists; spectrum.hpp), else of the laser.
// Without --of: line when it is known, else laser.
SpectrumOptions resolve_analysis_options(const AnalysisArgs& a, const RunPhysics& physics, const FieldFile& field);

}  // namespace edm::app
