// Electron ensembles: initial conditions in SI as the campaign gives them, converted by the scenario.
#pragma once
#include <cstdint>
#include <vector>

#include "edm/campaign.hpp"

namespace edm {

// One electron as the user describes it (SI): position at time t0, u = γβ.
struct ElectronInit {
  double t0 = 0, x = 0, y = 0, z = 0;  // s, m
  double ux = 0, uy = 0, uz = 0;       // γβ
};

// Deterministic sunflower (Vogel) disk of `count` points of radius R in the plane z = 0.
std::vector<ElectronInit> sunflower_disk(std::uint64_t count, double radius);
// Explicit list from a CSV file with columns t0,x,y,z,ux,uy,uz (header line optional, '#' comments).
// Errors name file:line.
std::vector<ElectronInit> read_electron_csv(const std::string& path);
// Gaussian beam about z = 0 moving along +z with mean Lorentz factor gamma: rms sizes, relative rms
// energy spread and normalised emittances (m·rad). A seeded, portable RNG (same seed, same electrons
// on every machine and for every MPI rank count).
std::vector<ElectronInit> gaussian_beam(const ElectronsSection& s, double gamma, std::uint64_t seed);

}  // namespace edm
