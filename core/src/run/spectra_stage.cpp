// The direct spectra in the run (share/docs/outputs.md "Direct spectra"): with [spectra] enabled,
// a SpectraAccumulator on this rank's first device takes every batch's splines beside the field
// accumulator, and rank 0 writes spectrum.h5's /direct group after field.h5 is committed. The
// directions are the angular screen's grid, or a flat screen's pixels seen from the origin.
#include <cmath>

#include "edm/directions.hpp"
#include "edm/error.hpp"
#include "edm/form_factor.hpp"
#include "edm/photon_units.hpp"
#include "edm/plugins.hpp"
#include "edm/spectra_file.hpp"
#include "run/stages.hpp"

namespace edm::detail {

// The directions of the run's screen, index iy·nx + ix: an angular screen's grid (directions.hpp),
// or a flat screen's pixels seen from the origin.
std::vector<std::array<double, 3>> screen_directions(const ScreenSection& section, const Screen& screen) {
  std::vector<std::array<double, 3>> n;
  if (section.type == ScreenType::Angular) {
    for (const DirectionCell& c : direction_cells(make_direction_grid(section))) n.push_back(c.n);
    return n;
  }
  n.reserve(std::size_t(screen.pixels()));
  for (int iy = 0; iy < screen.ny; ++iy)
    for (int ix = 0; ix < screen.nx; ++ix) {
      const double x = screen.pixel_x(ix), y = screen.pixel_y(iy), z = screen.z;
      const double r = std::sqrt(x * x + y * y + z * z);
      n.push_back({x / r, y / r, z / r});
    }
  return n;
}

std::optional<SpectraAccumulator> open_spectra(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan) {
  const SpectraSection& sec = ctx.campaign.spectra;
  if (!sec.enabled) return std::nullopt;
  // The sums are not yet in checkpoints nor reduced across ranks or devices: refuse what would lose them.
  if (plan.ranks.size > 1 || ctx.options.resume || plan.devices.size() > 1)
    throw ConfigError("EDM-CFG-624", "[spectra] enabled: the direct spectra run on one process and one device "
                                     "and cannot be resumed yet (" +
                                         std::string(plan.ranks.size > 1 ? "several MPI ranks"
                                                     : ctx.options.resume ? "edm resume"
                                                                          : "several devices") +
                                         "); run them without, or set spectra.enabled = false");
  SpectraGrid grid;
  const double wl = cell.units().omega;
  for (double w : spectra_frequencies(sec, wl)) grid.omega.push_back(w / wl);
  grid.directions = screen_directions(ctx.campaign.screen, cell.screen());
  if (cell.screen().far_field()) grid.far_screen = cell.screen();  // the fft method's series
  SpectraOptions o;
  o.nodes = sec.nodes;
  o.phase = sec.phase;
  o.method = sec.method;
  return SpectraAccumulator(open_device(plan.devices.front()), grid, o);
}

// electrons.form_factor_sigma_z / _r: each macro-particle stands for a Gaussian bunch, so the
// coherent amplitude of every (direction, ω) is multiplied by F(ω, n̂) (edm/form_factor.hpp,
// share/docs/ensembles.md), and the coherent d²W/dωdΩ by F². The incoherent sum is unchanged.
static void apply_form_factor(const RunContext& ctx, const PreparedCell& cell, const SpectraFileInfo& info,
                              SpectraSums& sums) {
  const ElectronsSection& el = ctx.campaign.electrons;
  if (!(el.form_factor_sigma_z > 0 || el.form_factor_sigma_r > 0) || sums.coherent.empty()) return;
  const EnsembleKinematics k = initial_kinematics(cell.plugin_scenario());
  const GaussianBunch bunch =
      laser_driven_bunch(el.form_factor_sigma_z, el.form_factor_sigma_r, k.gamma_mean, k.light_front_h, k.laser_direction);
  const std::size_t nw = info.omega.size();
  for (std::size_t d = 0; d < info.directions.size(); ++d)
    for (std::size_t w = 0; w < nw; ++w) {
      const double F = gaussian_form_factor(info.omega[w], info.directions[d].data(), bunch);
      for (std::size_t i = 0; i < 6; ++i) sums.coherent[(d * nw + w) * 6 + i] *= F;
    }
}

void write_spectra(const RunContext& ctx, const PreparedCell& cell, SpectraAccumulator& spectra, const RunSummary& S) {
  SpectraSums sums = spectra.finish();
  SpectraFileInfo info;
  const double wl = cell.units().omega;
  info.omega = spectra_frequencies(ctx.campaign.spectra, wl);
  info.directions = screen_directions(ctx.campaign.screen, cell.screen());
  info.direction_shape = {std::size_t(cell.screen().ny), std::size_t(cell.screen().nx)};
  if (ctx.campaign.screen.type == ScreenType::Angular)
    for (const DirectionCell& c : direction_cells(make_direction_grid(ctx.campaign.screen)))
      info.solid_angle.push_back(c.solid_angle);
  info.laser_omega = wl;
  info.section = ctx.campaign.spectra;
  info.run_id = S.run_id;
  info.edm_version = EDM_VERSION;
  apply_form_factor(ctx, cell, info, sums);
  write_spectra_file(S.folder / "spectrum.h5", info, sums);
}

}  // namespace edm::detail
