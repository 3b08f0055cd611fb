// The Gaussian form factor of the coherent sum: how much of the coherent spectrum of point-like
// macro-particles survives when each stands for a Gaussian bunch of rms length σ_z and transverse
// size σ_r. share/docs/ensembles.md derives it and states its assumptions; in short, an electron
// displaced from its macro-particle by δ = (δx, δy, δz) at one lab time radiates the macro-particle's
// far-field amplitude times e^{iωΔφ} with
//   Δφ = δz (1 − v_d n_z) / (c (v_d − β_z)) − n̂⊥·δ⊥ / c,
// where v_d is the velocity (units of c) along z of the pattern that drives the electrons (edm's
// lasers: v_d = s = ±1, the laser direction; a static structure: v_d = 0) and β_z the bunch's mean
// longitudinal velocity. Averaged over a Gaussian δ:
//   F(ω, n̂) = exp(−(ω/c)² [σ_z² L² + σ_r² (n_x² + n_y²)] / 2),   L = (1 − v_d n_z)/(v_d − β_z),
// real and in [0, 1]. The coherent d²W/dωdΩ is multiplied by F², its amplitude by F.
#pragma once

namespace edm {

struct GaussianBunch {
  double sigma_z = 0;     // rms length along z at one lab time, m (0: no longitudinal factor)
  double sigma_r = 0;     // rms size in x and in y, m (0: no transverse factor)
  double beta_z = 0;      // the bunch's mean longitudinal velocity, units of c (|β_z| < 1)
  double drive_beta = 1;  // velocity along z of the driving pattern, units of c: ±1 a laser along ±z
                          // (edm's laser direction s), 0 a static structure; must differ from β_z
};

// F(ω, n̂) for ω in rad/s (ω ≥ 0) and a unit vector n̂ (normalised here). ConfigError naming the
// value for a negative or non-finite ω or size, |β_z| ≥ 1, a zero n̂, or v_d = β_z (EDM-CFG-644).
double gaussian_form_factor(double omega, const double n[3], const GaussianBunch& bunch);

// The bunch of a run: the keys electrons.form_factor_sigma_z / _r, driven by edm's laser along s ẑ
// (drive_beta = s), with β_z = ⟨u_z⟩/⟨γ⟩ = s(γ_mean − h)/γ_mean from run.toml [kinematics]
// (gamma_mean, light_front_h, laser_direction: the ensemble's means before the pulse).
GaussianBunch laser_driven_bunch(double sigma_z, double sigma_r, double gamma_mean, double light_front_h,
                                 int laser_direction);

// The longitudinal lever L = (1 − v_d n_z)/(v_d − β_z) of the formula above: δz (in m) moves the
// phase ωΔφ by (ω/c)·L·δz.
double form_factor_lever(double n_z, const GaussianBunch& bunch);

}  // namespace edm
