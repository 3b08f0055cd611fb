#!/usr/bin/env python3
"""edm_plot.py RUN [--direct-omega W]: the PNGs of an edm run folder, into RUN/plots/ (called by
`edm plot RUN`); edm_plot.py --check-spectrum RUN [--window W] [--harmonics L] [--of B]: whether
RUN/spectrum.h5 was computed with those options (exit 0), or not (exit 3, the reason on stderr).

Reads RUN/field.h5 (the trace nearest the axis, /gamma) and RUN/spectrum.h5 (written by `edm
spectrum`: fluence, raw spectra, harmonic maps; by `edm run` with [spectra]: /direct) through edmio
(share/python/edmio.py, found beside this folder). Flat screens in mm and mrad, angular ones in
mrad; the raw spectra mark Nyquist and where harmonics above it alias (a warning each on stderr);
/direct in photons per 0.1 % BW with the photon number into the grid (share/docs/outputs.md,
"plots/"). The numbers of a title also go into the PNG's text chunks ("edm:…").
Uses matplotlib's Agg backend, so it never needs a display. Each PNG is written under a temporary
name in RUN/plots/ and renamed over its own name once complete, so a plot cut short (an error, a
full disk, SIGINT, SIGTERM, SIGHUP or SIGQUIT) leaves the previous PNG of that name as it was and no half-written file.
Exit status 0 on success; 1 with one line "edm_plot.py: error: ..." on stderr otherwise.
"""
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display on clusters or in tests
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# edmio lives in share/python (source tree) or <prefix>/share/edm/python (installed): beside plot/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "python"))
import edmio  # noqa: E402
import plotsave  # noqa: E402  (beside this script)


class PlotError(Exception):
    pass


def need(f, path, what):
    if path not in f:
        raise PlotError(f"{f.filename} has no {path} ({what})")
    return f[path]


def save(fig, out, name, written, meta=None):
    """fig into out/name, whole or not at all (plotsave.save_png); meta: PNG text chunks (the numbers
    a title shows, for tests and scripts: "edm:total_photons_coherent", …)."""
    try:
        written.append(plotsave.save_png(fig, out, name, 110, bbox_inches="tight", metadata=meta or {}))
    finally:
        plt.close(fig)


def harmonic_marks(s, omega_l, nyq):
    """Harmonic positions in units of the laser ω: the requested ones, else multiples of the peak."""
    h = s["/harmonics/omega"][...] if "/harmonics/omega" in s else np.array([])
    order = s["/harmonics/order"][...] if "/harmonics/order" in s else np.array([])
    if h.size:
        return [(int(n), w / omega_l) for n, w in zip(order, h)]
    peak = float(s.attrs.get("peak_omega_on_axis", 0.0))
    if peak <= 0:
        return []
    return [(n, n * peak / omega_l) for n in range(1, 11) if n * peak < nyq]


def screen_axes(ax, z):
    """Primary axes in mm; secondary axes in mrad (θ = atan(x/|z|))."""
    ax.set_xlabel("x (mm)")
    ax.set_ylabel("y (mm)")
    zmm = abs(z) * 1e3
    fwd = lambda x: np.arctan2(x, zmm) * 1e3  # noqa: E731
    inv = lambda t: zmm * np.tan(t * 1e-3)  # noqa: E731
    ax.secondary_xaxis("top", functions=(fwd, inv)).set_xlabel("θx (mrad)")
    ax.secondary_yaxis("right", functions=(fwd, inv)).set_ylabel("θy (mrad)")


def extent_mm(x, y, sy=1e3):
    """imshow's extent (x in mm or mrad, y times sy: mm, mrad or deg) from pixel centres: half a
    pitch beyond the outer centres."""
    hx = 0.5 * (x[-1] - x[0]) / (len(x) - 1) if len(x) > 1 else 0.5
    hy = 0.5 * (y[-1] - y[0]) / (len(y) - 1) if len(y) > 1 else 0.5
    return [(x[0] - hx) * 1e3, (x[-1] + hx) * 1e3, (y[0] - hy) * sy, (y[-1] + hy) * sy]


def map_plot(data, x, y, screen, title, unit, out, name, written):
    """A map over the screen: a flat screen's x, y (m) in mm with mrad beside; an angular screen's
    two angles (rad) in mrad, with no screen-plane axes (its distance may be infinite)."""
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    im = ax.imshow(data, origin="lower", extent=extent_mm(x, y, screen.sy), aspect="auto" if screen.angles else "equal",
                   cmap="inferno")
    screen.label_map(ax)
    ax.set_title(title, pad=12 if screen.angles else 28, fontsize=10)
    fig.colorbar(im, ax=ax, pad=0.04 if screen.angles else 0.14).set_label(unit)
    save(fig, out, name, written, {"edm:axes": f"{ax.get_xlabel()} | {ax.get_ylabel()}"})


# --- Twisted light: the /harmonic_field, /oam, /observables and /envelope groups of spectrum.h5 -----
# (share/docs/twisted_light.md). Phases are of the e^{−iωt} convention, azimuths about the screen
# normal; the fitted ℓ of each circular component goes into the titles.

SIGMA_NAMES = {0: ("+1", "plus"), 1: ("−1", "minus")}


class SpectrumGroup:
    """A group of spectrum.h5 read through edmio: g["ell"] is s["/oam/ell"], g.attrs its attributes."""

    def __init__(self, s, path):
        self.s, self.path = s, path
        self.attrs = s.attrs_of(path)

    def __getitem__(self, name):
        return self.s[f"{self.path}/{name}"]


def text_attr(obj, name, default=""):
    v = obj.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def ell_label(s, h, k):
    """'ℓ = +4.002 (winding +4 on 2 of 4 rings; 1 with another winding; 1 with phase residual above
    the cut)' from /oam for harmonic index h, component k: the words of `edm spectrum`'s line, from
    /oam/cut (per ring: 0 in ℓ, 1 fit refused, 2 below the noise floor, 3 residual, 4 another
    winding, 5 no shared winding)."""
    if "/oam/ell" not in s or s["/oam/ell"].shape[0] <= h:
        return "no ring fit"
    total = s["/oam/radius"].shape[0]
    if int(s["/oam/accepted"][h, k]) == 0:
        return f"no fit: refused on all {total} rings" if total else "no rings on this screen"
    cut = np.asarray(s["/oam/cut"][h, k]).astype(int)
    why = {1: "refused", 2: "below the noise floor", 3: "with phase residual above the cut", 4: "with another winding"}
    left = "".join(f"; {int(np.sum(cut == c))} {w}" for c, w in why.items() if np.any(cut == c))
    ell = float(s["/oam/ell"][h, k])
    if not np.isfinite(ell):  # no ring passed the quality cuts, or they share no winding (/oam/cut 5)
        if np.any(cut == 5):
            return f"no common winding ({int(np.sum(cut == 5))} of {total} rings wind differently{left})"
        return f"no ℓ: no ring passes the quality cuts ({total} rings{left})"
    wind = int(s["/oam/ell_winding"][h, k])
    passed = int(np.sum(cut == 0))
    return f"ℓ = {ell:+.3f} (winding {wind:+d} on {passed} of {total} rings{left})"


def bilinear(img, x, y, xs, ys):
    """img (ny, nx) on axes x, y sampled at points (xs, ys); NaN outside."""
    fx = (xs - x[0]) / (x[1] - x[0]) if len(x) > 1 else np.zeros_like(xs)
    fy = (ys - y[0]) / (y[1] - y[0]) if len(y) > 1 else np.zeros_like(ys)
    inside = (fx >= 0) & (fx <= len(x) - 1) & (fy >= 0) & (fy <= len(y) - 1)
    i = np.clip(np.floor(fx).astype(int), 0, max(len(x) - 2, 0))
    j = np.clip(np.floor(fy).astype(int), 0, max(len(y) - 2, 0))
    tx, ty = fx - i, fy - j
    i1, j1 = np.minimum(i + 1, len(x) - 1), np.minimum(j + 1, len(y) - 1)
    v = (img[j, i] * (1 - tx) + img[j, i1] * tx) * (1 - ty) + (img[j1, i] * (1 - tx) + img[j1, i1] * tx) * ty
    return np.where(inside, v, np.nan)


def plot_phase_maps(s, x, y, z, omega_l, out, written):
    """Phase of A_σ per harmonic and circular component, shaded by amplitude, rings drawn."""
    hf = SpectrumGroup(s, "/harmonic_field")
    amp, phase = hf["circular_amplitude"][...], hf["circular_phase"][...]
    order, wbin = hf["order"][...], hf["omega_bin"][...]
    nu = int(hf.attrs.get("normal", 1))
    radii = s["/oam/radius"][...] if "/oam/radius" in s else np.array([])
    oam = SpectrumGroup(s, "/oam")
    cx, cy = float(oam.attrs.get("centre_x", 0.0)), float(oam.attrs.get("centre_y", 0.0))
    ext = [x[0] * 1e3, x[-1] * 1e3, y[0] * 1e3, y[-1] * 1e3]
    for h in range(amp.shape[0]):
        for k in range(2):
            a = amp[h, k]
            top = a.max() if a.size and a.max() > 0 else 1.0
            fig, ax = plt.subplots(figsize=(6.4, 5.2))
            im = ax.imshow(phase[h, k], origin="lower", extent=ext, aspect="equal", cmap="twilight",
                           vmin=-np.pi, vmax=np.pi, interpolation="nearest")
            # Dark where the amplitude is low: the phase there is undefined or noise.
            shade = np.clip(1 - a / top, 0, 1) ** 2
            ax.imshow(np.zeros_like(a), origin="lower", extent=ext, aspect="equal", cmap="gray", vmin=0, vmax=1,
                      alpha=shade, interpolation="nearest")
            t = np.linspace(0, 2 * np.pi, 200)
            for r in radii:
                ax.plot((cx + r * np.cos(t)) * 1e3, (cy + nu * r * np.sin(t)) * 1e3, color="white", lw=0.6,
                        alpha=0.8)
            screen_axes(ax, z)
            sig, name = SIGMA_NAMES[k]
            ax.set_title(f"harmonic {int(order[h])} (ω = {wbin[h] / omega_l:.4g} ω_laser), σ = {sig}: arg A_σ\n"
                         f"{ell_label(s, h, k)}", pad=28, fontsize=10)
            fig.colorbar(im, ax=ax, pad=0.14).set_label("phase (rad), e^(−iωt), azimuth about the normal")
            save(fig, out, f"phase_{int(order[h])}_sigma_{name}.png", written)


def plot_ring_phases(s, out, written):
    """Unwrapped phase against the azimuth on every ring, with the fitted slope ℓ."""
    o = SpectrumGroup(s, "/oam")
    if o["radius"].shape[0] == 0:
        return
    phi = o["azimuth"][...]
    radii = o["radius"][...]
    z = abs(float(s.attrs["screen_z"]))
    order = s["/harmonic_field/order"][...]
    for h in range(o["ell_fit"].shape[0]):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=False)
        for k, ax in enumerate(axes):
            for r_i, r in enumerate(radii):
                psi = o["phase_unwrapped"][h, k, r_i]
                if int(o["status"][h, k, r_i]) != 0 or not np.any(np.isfinite(psi)):
                    continue
                good = np.isfinite(psi)
                slope = float(o["ell_fit"][h, k, r_i])
                c = np.mean(psi[good] - slope * phi[good])
                label = f"θ = {np.arctan2(r, z) * 1e3:.3g} mrad: ℓ = {slope:+.3f}"
                line = ax.plot(np.degrees(phi[good]), psi[good] - c, lw=1.2, label=label)[0]
                ax.plot(np.degrees(phi), slope * phi, ls="--", lw=0.8, color=line.get_color())
            ax.set_xlabel("azimuth φ about the normal (deg)")
            ax.set_ylabel("unwrapped phase − offset (rad)")
            ax.set_title(f"σ = {SIGMA_NAMES[k][0]}: {ell_label(s, h, k)}", fontsize=9)
            ax.grid(True, alpha=0.3)
            if ax.lines:
                ax.legend(fontsize=7)
        fig.suptitle(f"harmonic {int(order[h])}: phase on rings (dashed: fitted ℓ φ)")
        save(fig, out, f"ring_phase_{int(order[h])}.png", written)


def plot_polar_intensity(s, x, y, out, written):
    """Band energy map in polar coordinates (θ, φ about the normal) and its envelope profiles."""
    if "/harmonics/maps" not in s or "/envelope/radius" not in s:
        return
    maps = s["/harmonics/maps"][...]
    order = s["/harmonics/order"][...]
    z = abs(float(s.attrs["screen_z"]))
    nu = int(s.attrs_of("/harmonic_field").get("normal", 1))
    env = SpectrumGroup(s, "/envelope")
    cx, cy = float(env.attrs.get("centre_x", 0.0)), float(env.attrs.get("centre_y", 0.0))
    radius = env["radius"][...]
    if radius.size == 0:
        return
    rmax = radius[-1] + 0.5 * (radius[1] - radius[0] if radius.size > 1 else radius[0])
    rr = np.linspace(0, rmax, 60)
    pp = np.linspace(0, 2 * np.pi, 181)
    P, Rr = np.meshgrid(pp, rr)
    for h in range(maps.shape[0]):
        img = bilinear(maps[h], x, y, cx + Rr * np.cos(P), cy + nu * Rr * np.sin(P))
        fig = plt.figure(figsize=(11, 4.6))
        ax = fig.add_subplot(1, 2, 1, projection="polar")
        ax.grid(False)
        im = ax.pcolormesh(P, np.arctan2(Rr, z) * 1e3, img, shading="auto", cmap="inferno")
        ax.set_rlabel_position(157.5)
        ax.tick_params(axis="y", labelsize=7, colors="tab:cyan")
        fits = "; ".join(f"σ={SIGMA_NAMES[k][0]}: {ell_label(s, h, k)}" for k in range(2)) if "/oam/ell" in s else ""
        ax.set_title(f"harmonic {int(order[h])}: dW/dΩ against θ (mrad, radial) and φ about the normal\n{fits}",
                     fontsize=8, pad=18)
        fig.colorbar(im, ax=ax, pad=0.12, shrink=0.85).set_label("J/sr")
        ax2 = fig.add_subplot(1, 2, 2, projection="polar")
        az = env["azimuth"][...]
        prof = env["azimuthal_mean"][h]
        ax2.plot(np.append(az, az[0]), np.append(prof, prof[0]), lw=1.2)
        ax2.set_title("speckle envelope: ring-averaged azimuthal profile (J/sr)", fontsize=9, pad=18)
        save(fig, out, f"polar_{int(order[h])}.png", written)


def plot_envelope(s, x, y, z, out, written):
    """The band map, its envelope (the radial profile on the pixels) and the radial profile with contrast."""
    if "/envelope/map" not in s or s["/envelope/map"].shape[0] == 0:
        return
    env = SpectrumGroup(s, "/envelope")
    maps, order = s["/harmonics/maps"][...], s["/harmonics/order"][...]
    theta = np.arctan2(env["radius"][...], abs(z)) * 1e3
    ext = [x[0] * 1e3, x[-1] * 1e3, y[0] * 1e3, y[-1] * 1e3]
    for h in range(maps.shape[0]):
        fig, axes = plt.subplots(1, 3, figsize=(15.5, 4.4))
        fig.subplots_adjust(wspace=0.45)
        for ax, data, title in ((axes[0], maps[h], "band map dW/dΩ"), (axes[1], env["map"][h], "envelope (ring average)")):
            im = ax.imshow(data, origin="lower", extent=ext, aspect="equal", cmap="inferno")
            ax.set_xlabel("x (mm)")
            ax.set_ylabel("y (mm)")
            ax.set_title(f"harmonic {int(order[h])}: {title}", fontsize=9)
            fig.colorbar(im, ax=ax).set_label("J/sr")
        ax = axes[2]
        ax.plot(theta, env["radial_mean"][h], label="ring mean (J/sr)")
        ax.set_xlabel("θ (mrad)")
        ax.set_ylabel("J/sr")
        ax2 = ax.twinx()
        ax2.plot(theta, env["radial_contrast"][h], color="tab:red", ls="--", label="speckle contrast std/mean")
        ax2.set_ylabel("contrast")
        ax.set_title("radial profile", fontsize=9)
        ax.grid(True, alpha=0.3)
        save(fig, out, f"envelope_{int(order[h])}.png", written)


def plot_lz_spectrum(s, omega_l, marks, out, written):
    """dW/dω, dL_z/dω through the screen and ω (dL_z/dω)/(dW/dω), the angular momentum per photon."""
    ob = SpectrumGroup(s, "/observables")
    w = s["/axes/omega"][...]
    dW, dL = ob["dW_domega"][...], ob["dLz_domega"][...]
    x = w / omega_l
    fig, axes = plt.subplots(3, 1, figsize=(7.5, 9.0), sharex=True, constrained_layout=True)
    axes[0].plot(x, dW, lw=1)
    axes[0].set_ylabel("dW/dω (J·s/rad)")
    axes[0].set_title(f"through the screen (no window; L_z about the axis, fields {text_attr(ob, 'lz_field', 'E,B')}):"
                      f" W = {ob.attrs['energy_time']:.4g} J, L_z = {ob.attrs['lz_time']:.4g} J·s", fontsize=9)
    axes[1].plot(x, dL, lw=1, color="tab:green")
    axes[1].axhline(0, color="k", lw=0.5)
    axes[1].set_ylabel("dL_z/dω (J·s²/rad)")
    ratio = np.full_like(dW, np.nan)
    strong = np.abs(dW) > 1e-6 * np.abs(dW).max() if np.abs(dW).max() > 0 else np.zeros(dW.shape, bool)
    ratio[strong] = w[strong] * dL[strong] / dW[strong]
    axes[2].plot(x, ratio, lw=1, color="tab:purple")
    axes[2].set_ylabel("ω (dL_z/dω)/(dW/dω) (ħ per photon)")
    axes[2].set_xlabel("ω / ω_laser")
    if "/observables/harmonic/j_per_photon" in s:
        # The flux book (through the screen, this panel's ratio over the band) and, where spectrum.h5
        # has it, the photons' J from the amplitudes' orbital + spin densities, which a screen that
        # cuts the light does not bias (share/docs/twisted_light.md, "The photons' J"). A band
        # without its line holds NaN: marked as such, never as a number.
        jn = s["/observables/harmonic/j_per_photon"][...]
        pj = (s["/observables/harmonic/photon_j"][...] if "/observables/harmonic/photon_j" in s
              else np.full_like(jn, np.nan))
        sus = (s["/observables/harmonic/photon_j_suspect"][...] if "/observables/harmonic/photon_j_suspect" in s
               else np.zeros_like(jn))
        lines = []
        for (n, wn), j, p, bad in zip(marks, jn, pj, sus):
            if not np.isfinite(j):
                lines.append(f"n={n}: no line in its band")
                continue
            axes[2].plot([wn], [j], "o", color="tab:red")
            text = f"n={n}: {j:+.3g} ħ through the screen (●)"
            if np.isfinite(p):
                axes[2].plot([wn], [p], "x", color="k")
                text += f", photons' J {p:+.3g} ħ (×)" + ("  SUSPECT: not its rings' ℓ+σ" if bad else "")
            lines.append(text)
        axes[2].set_title("\n".join(lines), fontsize=8, loc="left")
    for ax in axes:
        for n, wn in marks:
            ax.axvline(wn, color="tab:red", ls="--", lw=0.6, alpha=0.5)
        ax.grid(True, alpha=0.3)
    hi = max([wn for _, wn in marks], default=x[-1]) + 1
    axes[2].set_xlim(0, min(x[-1], hi))
    save(fig, out, "lz_spectrum.png", written)


def plot_twisted_light(s, x, y, z, omega_l, marks, out, written):
    if "/harmonic_field/circular_phase" in s:
        plot_phase_maps(s, x, y, z, omega_l, out, written)
    if "/oam/ell" in s:
        plot_ring_phases(s, out, written)
    plot_polar_intensity(s, x, y, out, written)
    plot_envelope(s, x, y, z, out, written)
    if "/observables/dLz_domega" in s:
        plot_lz_spectrum(s, omega_l, marks, out, written)


# --- The screen, the raw spectra and their aliases -----------------------------------------------

HBAR = 1.054571817e-34  # J·s
EV = 1.602176634e-19  # J
ALIAS_ORDERS = 6  # harmonics of the line checked for aliasing: 2 … 6


class Screen:
    """What the axes of a map are: a flat screen's pixels (m, drawn in mm with mrad beside) or an
    angular screen's two angles (rad, drawn in mrad), read by name from spectrum.h5, else field.h5,
    else run.toml, so a file without one of the attributes still plots."""

    def __init__(self, sources, manifest_screen):
        def first(name, default):
            for attrs in sources:
                if name in attrs:
                    v = attrs[name]
                    return v.decode() if isinstance(v, bytes) else v
            return default

        stype = str(first("screen_type", manifest_screen.get("type", "flat")))
        self.angular = stype == "angular"
        # "true" in spectrum.h5, "true: E, B hold R·E …" in field.h5 (bool("false") is True).
        self.far = self.angular and str(first("far_field", "false")).strip().lower().startswith("true")
        sa = str(first("screen_angles", manifest_screen.get("angles", "xy")))
        self.angles = None if not self.angular else (("θx", "θy") if sa == "xy" else ("θ", "φ"))
        # The second axis in its plot unit: φ of a polar grid in degrees (it runs to 2π), else mrad or mm.
        polar = self.angles is not None and self.angles[1] == "φ"
        self.sy, self.y_unit = (180 / np.pi, "deg") if polar else (1e3, "mrad" if self.angular else "mm")
        self.axis = str(first("screen_axis", "z"))
        self.z = float(first("screen_z", np.inf))

    def label_map(self, ax):
        if self.angles:
            ax.set_xlabel(f"{self.angles[0]} (mrad)")
            ax.set_ylabel(f"{self.angles[1]} ({self.y_unit})")
        else:
            screen_axes(ax, self.z)

    def where(self, x, y, ix, iy):
        if self.angles:
            return (f"{self.angles[0]} = {x[ix] * 1e3:.3g} mrad, "
                    f"{self.angles[1]} = {y[iy] * self.sy:.3g} {self.y_unit}")
        return f"x = {x[ix] * 1e3:.3g} mm, y = {y[iy] * 1e3:.3g} mm"

    def row_label(self):
        return f"{self.angles[0]} (mrad)" if self.angles else "θx (mrad)"


def photon_energy_axis(ax, omega_l):
    """ħω beside ω/ω_laser: a secondary x axis on top, in eV or keV (whichever reads better)."""
    lo, hi = ax.get_xlim()
    top = max(abs(lo), abs(hi)) * HBAR * omega_l / EV
    scale, unit = (1e3, "keV") if top >= 1e3 else (1.0, "eV")
    k = HBAR * omega_l / EV / scale
    ax.secondary_xaxis("top", functions=(lambda w: w * k, lambda e: e / k)).set_xlabel(f"photon energy ħω ({unit})")


def line_base(s, omega_l):
    """The line whose harmonics may alias (rad/s): /harmonics' base when it is the run's expected
    line, else the on-axis peak; None when neither is known."""
    h = s.attrs_of("/harmonics")
    if text_attr_dict(h, "of") == "line" and float(h.get("base_omega", 0) or 0) > 0:
        return float(h["base_omega"]), "the line"
    peak = float(s.attrs.get("peak_omega_on_axis", 0) or 0)
    return (peak, "the on-axis peak") if peak > 0 else (None, "")


def text_attr_dict(attrs, name, default=""):
    v = attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def aliases(base, nyq):
    """[(n, n·base, where it lands)] for the harmonics 2 … ALIAS_ORDERS above Nyquist: sampled at
    π/nyq, a frequency f appears at |f − 2k·nyq| folded into [0, nyq]."""
    out = []
    for n in range(2, ALIAS_ORDERS + 1):
        f = n * base
        if f <= nyq:
            continue
        folded = f % (2 * nyq)
        out.append((n, f, 2 * nyq - folded if folded > nyq else folded))
    return out


def mark_nyquist_and_aliases(ax, nyq_l, alias_marks, dark=False):
    """The Nyquist frequency (a labelled line) and where the harmonics above it land; dark: on a
    colour map, drawn in white."""
    ink, alias_ink = ("white", "white") if dark else ("k", "tab:purple")
    ax.axvline(nyq_l, color=ink, ls="-", lw=1.0)
    ax.text(nyq_l, 0.5, f"Nyquist π/dt = {nyq_l:.4g} ω_laser ", rotation=90, ha="right", va="center", fontsize=8,
            color=ink, transform=ax.get_xaxis_transform(),
            bbox=None if dark else {"facecolor": "white", "alpha": 0.8, "linewidth": 0, "pad": 1})
    for n, _, at in alias_marks:
        ax.axvline(at, color=alias_ink, ls=":", lw=1.0)
        ax.text(at, 0.02, f" n={n} alias", color=alias_ink, rotation=90, fontsize=7, va="bottom",
                transform=ax.get_xaxis_transform())


def plot_raw_spectra(s, ctx, out, written):
    """The time-domain spectra of `edm spectrum`, up to Nyquist: on axis, integrated, along the row."""
    w, marks, omega_l = ctx["w"], ctx["marks"], ctx["omega_l"]
    nyq_l = ctx["nyq"] / omega_l
    alias_marks = [(n, f / omega_l, at / omega_l) for n, f, at in ctx["aliases"]]
    meta = {"edm:nyquist_omega_laser": f"{nyq_l:.6g}",
            "edm:aliases": "; ".join(f"n={n} {f:.6g} -> {at:.6g}" for n, f, at in alias_marks)}
    on_axis = need(s, "/on_axis/d2I_domega_dOmega", "on-axis spectrum")[...]
    integ = need(s, "/integrated/dI_domega", "screen-integrated spectrum")[...]
    centre = "direction nearest the axis" if ctx["screen"].angles else "centre pixel"
    for data, name, ylabel, title in (
        (on_axis, "spectrum_on_axis.png", "d²I/dωdΩ (J·s/rad/sr)", f"on-axis spectrum ({centre})"),
        (integ, "spectrum_integrated.png", "dI/dω (J·s/rad)", "spectrum integrated over the grid"),
    ):
        fig, ax = plt.subplots(figsize=(7.5, 4.6))
        pos = data[1:] > 0
        if np.any(pos):
            ax.semilogy(w[1:][pos], data[1:][pos], lw=1)
            # 14 decades below the peak is below any physics in FP64 fields; deeper is round-off.
            top = data[1:][pos].max()
            ax.set_ylim(max(data[1:][pos].min(), top * 1e-14) * 0.5, top * 3)
        else:
            ax.plot(w, data, lw=1)
        for n, wn in marks:
            if wn <= w[-1]:
                ax.axvline(wn, color="tab:red", ls="--", lw=0.8, alpha=0.7)
                ax.text(wn, 0.98, f" n={n}", color="tab:red", transform=ax.get_xaxis_transform(), va="top",
                        fontsize=8)
        mark_nyquist_and_aliases(ax, nyq_l, alias_marks)
        ax.set_xlim(0, w[-1] * 1.02)
        ax.set_xlabel("ω / ω_laser")
        ax.set_ylabel(ylabel)
        photon_energy_axis(ax, omega_l)
        ax.set_title(f"{title} — window {ctx['window']}, field {ctx['field']}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        save(fig, out, name, written, meta)

    # Angle-resolved spectrum along the row through the axis.
    if "/cut_x/d2I_domega_dOmega" in s:
        cut = s["/cut_x/d2I_domega_dOmega"][...]
        ang = s["/axes/x"] if ctx["screen"].angular or "/axes/theta_x" not in s else s["/axes/theta_x"]
        theta = ang[...] * 1e3
        fig, ax = plt.subplots(figsize=(7.5, 4.6))
        floor = cut[cut > 0].max() * 1e-8 if np.any(cut > 0) else 1.0
        im = ax.pcolormesh(w, theta, np.log10(np.maximum(cut, floor)), shading="auto", cmap="viridis")
        mark_nyquist_and_aliases(ax, nyq_l, alias_marks, dark=True)
        ax.set_xlabel("ω / ω_laser")
        ax.set_ylabel(ctx["screen"].row_label())
        photon_energy_axis(ax, omega_l)
        ax.set_title("log10 d²I/dωdΩ along the row through the axis", fontsize=10)
        fig.colorbar(im, ax=ax).set_label("log10 (J·s/rad/sr)")
        save(fig, out, "spectrum_vs_angle.png", written, meta)


def warn_aliases(run, ctx, base_name):
    for n, f, at in ctx["aliases"]:
        print(f"edm_plot.py: warning: harmonic {n} of {base_name} ({f / ctx['omega_l']:.4g} ω_laser) lies above "
              f"the Nyquist frequency ({ctx['nyq'] / ctx['omega_l']:.4g} ω_laser) and aliases to "
              f"{at / ctx['omega_l']:.4g} ω_laser in {run}/plots/spectrum_*.png (marked 'n={n} alias'); more "
              f"screen.samples_per_period resolve it", file=sys.stderr)


# --- /direct: the run's direct spectra (share/docs/outputs.md "spectrum.h5: direct spectra") ------

def trapezoid(y, x, axis=-1):
    """∫ y dx by the trapezoid rule along axis (np.trapz is deprecated in numpy 2)."""
    y = np.moveaxis(y, axis, -1)
    if y.shape[-1] < 2:
        return np.zeros(y.shape[:-1])
    return np.sum(0.5 * (y[..., 1:] + y[..., :-1]) * np.diff(x), axis=-1)


def direct_solid_angles(s, shape, x, y, screen):
    """ΔΩ of each direction (ny, nx), sr: the grid's cells, else spectrum.h5's pixel solid angles,
    else dx dy |z|/R³ of the flat screen's pixels."""
    if "/direct/axes/solid_angle" in s:
        return s["/direct/axes/solid_angle"][...].reshape(shape)
    if "/pixel/solid_angle" in s and s["/pixel/solid_angle"].shape == shape:
        return s["/pixel/solid_angle"][...]
    dx = abs(x[1] - x[0]) if len(x) > 1 else 0.0
    dy = abs(y[1] - y[0]) if len(y) > 1 else 0.0
    X, Y = np.meshgrid(x, y)
    return dx * dy * abs(screen.z) / (X * X + Y * Y + screen.z * screen.z) ** 1.5


def axis_direction(s, shape, screen):
    """(iy, ix) of the direction nearest the screen axis (the first in row order on a tie)."""
    n = s["/direct/axes/direction"][...].reshape(shape + (3,))
    name = screen.axis.strip()
    sign = -1.0 if name.startswith("-") else 1.0
    k = {"x": 0, "y": 1, "z": 2}.get(name.lstrip("+-"), 2)
    if not screen.angular:
        sign = 1.0 if screen.z >= 0 else -1.0
        k = 2
    cosine = sign * n[..., k]
    iy, ix = np.unravel_index(int(np.argmax(cosine)), shape)
    return int(iy), int(ix)


def total_photons(s, sums, wd, dOmega):
    """N = Σ_directions ΔΩ ∫ d²N/dωdΩ dω over the grid's ω (trapezoid), per shot, per sum."""
    out = {}
    for name in sums:
        per_omega = s[f"/direct/{name}/photons_per_omega"][...]  # (ny, nx, nω), photons·s/rad/sr
        out[name] = float(np.sum(dOmega * trapezoid(per_omega, wd)))
    return out


def plot_direct(s, ctx, out, written):
    """Photons per 0.1 % BW: maps at one ω, coherent against incoherent on axis, against angle."""
    sums = [n for n in ("coherent", "incoherent") if f"/direct/{n}/photons_per_0.1pct_bw" in s]
    if not sums or "/direct/axes/omega" not in s:
        return
    screen, omega_l = ctx["screen"], ctx["omega_l"]
    wd = s["/direct/axes/omega"][...]
    data = {n: s[f"/direct/{n}/photons_per_0.1pct_bw"][...] for n in sums}
    shape = data[sums[0]].shape[:2]
    x = ctx["x"] if len(ctx["x"]) == shape[1] else np.arange(shape[1], dtype=float)
    y = ctx["y"] if len(ctx["y"]) == shape[0] else np.arange(shape[0], dtype=float)
    dOmega = direct_solid_angles(s, shape, x, y, screen)
    N = total_photons(s, sums, wd, dOmega)
    band = f"{wd[0] / omega_l:.4g} … {wd[-1] / omega_l:.4g} ω_laser"
    caption = "photons per shot into the grid, " + band + ": " + ", ".join(f"{k} {v:.4g}" for k, v in N.items())
    meta = {f"edm:total_photons_{k}": repr(v) for k, v in N.items()}
    iy, ix = axis_direction(s, shape, screen)

    # Maps at one ω: the chosen one, else the line, else the on-axis peak of the first sum.
    target = ctx["at_omega"] * omega_l if ctx["at_omega"] else (ctx["base"] or 0.0)
    k = int(np.argmin(np.abs(wd - target))) if target > 0 else int(np.argmax(data[sums[0]][iy, ix]))
    e_ev = HBAR * wd[k] / EV
    fig, axes = plt.subplots(1, len(sums), figsize=(6.2 * len(sums), 5.4), squeeze=False, layout="constrained")
    ext = extent_mm(x, y, screen.sy)
    for ax, name in zip(axes[0], sums):
        im = ax.imshow(data[name][:, :, k], origin="lower", extent=ext, cmap="inferno",
                       aspect="auto" if screen.angles else "equal")
        screen.label_map(ax)
        ax.set_title(f"{name}", pad=28 if not screen.angles else 6)
        fig.colorbar(im, ax=ax, pad=0.1 if not screen.angles else 0.02).set_label("photons/sr per 0.1 % BW, per shot")
    fig.suptitle(f"direct spectra at ω = {wd[k] / omega_l:.4g} ω_laser (ħω = {e_ev:.4g} eV)\n{caption}", fontsize=9)
    save(fig, out, "direct_map.png", written, dict(meta, **{"edm:map_omega_laser": f"{wd[k] / omega_l:.6g}"}))

    # Coherent against incoherent in the direction nearest the axis.
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for name, style in zip(sums, ("-", "--")):
        v = data[name][iy, ix]
        pos = v > 0
        if np.any(pos):
            ax.semilogy(wd[pos] / omega_l, v[pos], style, lw=1.2, label=name)
    if ctx["base"]:
        ax.axvline(ctx["base"] / omega_l, color="tab:red", ls=":", lw=0.8)
    ax.set_xlabel("ω / ω_laser")
    ax.set_ylabel("photons/sr per 0.1 % BW, per shot")
    photon_energy_axis(ax, omega_l)
    ax.set_title(f"direct spectra nearest the axis ({screen.where(x, y, ix, iy)})\n{caption}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=8)
    save(fig, out, "direct_on_axis.png", written, meta)

    # Against angle: the row through the axis.
    fig, axes = plt.subplots(1, len(sums), figsize=(6.4 * len(sums), 5.0), squeeze=False, layout="constrained")
    for ax, name in zip(axes[0], sums):
        row = data[name][iy]  # (nx, nω)
        floor = row[row > 0].max() * 1e-8 if np.any(row > 0) else 1.0
        im = ax.pcolormesh(wd / omega_l, x * 1e3, np.log10(np.maximum(row, floor)), shading="auto", cmap="viridis")
        ax.set_xlabel("ω / ω_laser")
        ax.set_ylabel(screen.row_label() if screen.angles else "x (mm)")
        photon_energy_axis(ax, omega_l)
        ax.set_title(f"{name}", fontsize=9)
        fig.colorbar(im, ax=ax).set_label("log10 photons/sr per 0.1 % BW")
    fig.suptitle(f"direct spectra along the row through the axis\n{caption}", fontsize=9)
    save(fig, out, "direct_vs_angle.png", written, meta)


# --- Whether spectrum.h5 was computed with the options edm plot was given -------------------------

def spectrum_differs(path, options):
    """Why spectrum.h5 at path is not what options ask for ("" when it is): options maps
    --window, --harmonics, --of to the values given on the command line. An attribute the file
    does not have counts as different (a file of another edm: cannot tell)."""
    import h5py  # edmio's own reader refuses a file without /axes/omega, which is the question here

    with h5py.File(path, "r") as h:
        if "axes/omega" not in h:
            what = "only the run's /direct" if "direct" in h else "no /axes/omega"
            return f"it holds no time-domain spectrum of `edm spectrum` ({what})"
    with edmio.load_spectrum(path) as s:
        for opt, value in options.items():
            if opt == "window":
                # The window's name leads the attribute (an edm that adds words after it still matches).
                have = text_attr_dict(s.attrs, "window", "")
                lead = re.match(r"[A-Za-z_-]*", have.strip()).group(0)
                if lead.replace("_", "-").lower() != value.replace("_", "-").lower():
                    return f"it was computed with window {have or '(not recorded)'}, not --window {value}"
            elif opt == "of":
                have = text_attr_dict(s.attrs_of("/harmonics"), "of", "")
                if have != value:
                    return f"its harmonics are of {have or '(not recorded)'}, not --of {value}"
            elif opt == "harmonics":
                want = sorted(int(v) for v in value.split(",") if v.strip())
                have = sorted(int(v) for v in s["/harmonics/order"]) if "/harmonics/order" in s else None
                if have != want:
                    shown = ",".join(map(str, have)) if have is not None else "(not recorded)"
                    return f"its harmonics are {shown or '(none)'}, not --harmonics {value}"
    return ""


def check_main(argv):
    """edm_plot.py --check-spectrum RUN [--window W] [--harmonics L] [--of B]: exit 0 when RUN's
    spectrum.h5 matches, 3 (with the reason on stderr) when edm plot must compute it again."""
    run, options, rest = argv[2], {}, argv[3:]
    for i in range(0, len(rest) - 1, 2):
        options[rest[i].lstrip("-")] = rest[i + 1]
    why = spectrum_differs(os.path.join(run, "spectrum.h5"), options)
    if why:
        print(f"[plot] {os.path.join(run, 'spectrum.h5')}: {why}: computing it again", file=sys.stderr)
        return 3
    return 0


def plot_field_and_gamma(f, s, screen, x, y, out, written):
    # Field trace in the direction nearest the axis (a hyperslab: the cube is never read whole).
    ix = int(s.attrs_of("/on_axis").get("ix", len(x) // 2))
    iy = int(s.attrs_of("/on_axis").get("iy", len(y) // 2))
    t = need(f, "/axes/t", "time axis")[...]
    bucket = "E_far" if "/E_far/x" in f else "E"
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for c in "xyz":
        ax.plot((t - t[0]) * 1e15, f[f"/{bucket}/{c}"][iy, ix, :], lw=0.8, label=f"{bucket}{c}")
    ax.set_xlabel(f"t − t₀ (fs), t₀ = {t[0]:.9g} s")
    ax.set_ylabel("V (R·E, the far field)" if screen.far or bucket == "E_far" else "V/m")
    what = "direction" if screen.angles else "pixel"
    ax.set_title(f"field in the {what} nearest the axis ({screen.where(x, y, ix, iy)})", fontsize=10)
    ax.legend()
    ax.grid(True, alpha=0.3)
    save(fig, out, "field_trace.png", written)

    if "/gamma/tau" in f and f["/gamma/tau"].size:
        tau = f["/gamma/tau"][...] * 1e15
        fig, ax = plt.subplots(figsize=(7, 4.2))
        ax.plot(tau, f["/gamma/mean"][...], label="mean")
        ax.fill_between(tau, f["/gamma/min"][...], f["/gamma/max"][...], alpha=0.3, label="min–max")
        ax.set_xlabel("τ (fs)")
        ax.set_ylabel("γ")
        ax.set_title("γ(τ) of the ensemble")
        ax.legend()
        ax.grid(True, alpha=0.3)
        save(fig, out, "gamma.png", written)


def plot_maps(s, ctx, out, written):
    x, y, screen, omega_l = ctx["x"], ctx["y"], ctx["screen"], ctx["omega_l"]
    fl = need(s, "/pixel/fluence", "fluence")[...]
    total = float(s.attrs.get("total_energy", np.nan))
    where = "into the grid's directions" if screen.angular else "through the screen"
    unit = "J/sr" if screen.far else "J/m²"
    map_plot(fl, x, y, screen, f"fluence ∫S·n̂ dt  (total {total:.4g} J {where})", unit, out, "fluence.png", written)
    if "/harmonics/maps" in s and s["/harmonics/maps"].shape[0]:
        maps, order, hw = s["/harmonics/maps"][...], s["/harmonics/order"][...], s["/harmonics/omega"][...]
        of = text_attr_dict(s.attrs_of("/harmonics"), "of", "laser")
        for k in range(maps.shape[0]):
            n = int(order[k])
            map_plot(maps[k], x, y, screen, f"harmonic {n} of the {of} (ω = {hw[k] / omega_l:.4g} ω_laser)", "J/sr",
                     out, f"harmonic_{n}.png", written)


def parse_args(argv):
    """edm_plot.py RUN [--direct-omega W]: W in units of the laser ω."""
    args = argv[1:]
    at = None
    if "--direct-omega" in args:
        i = args.index("--direct-omega")
        if i + 1 >= len(args):
            raise PlotError("--direct-omega needs a value (ω in units of the laser's)")
        try:
            at = float(args[i + 1])
        except ValueError:
            raise PlotError(f"--direct-omega {args[i + 1]!r}: not a number (ω in units of the laser's)") from None
        if not at > 0 or not np.isfinite(at):
            raise PlotError(f"--direct-omega {args[i + 1]}: must be a finite ω > 0 in units of the laser's")
        del args[i:i + 2]
    if len(args) != 1:
        raise PlotError("usage: edm_plot.py RUN [--direct-omega W]  |  edm_plot.py --check-spectrum RUN [options]")
    return args[0], at


def main(argv):
    run, at_omega = parse_args(argv)
    field_path = os.path.join(run, "field.h5")
    spec_path = os.path.join(run, "spectrum.h5")
    if not os.path.isdir(run):
        raise PlotError(f"{run}: no such run folder")
    if not os.path.exists(field_path):
        raise PlotError(f"{field_path}: no such file")
    if not os.path.exists(spec_path):
        raise PlotError(f"{spec_path}: no such file (run `edm spectrum {run}` first)")
    out = os.path.join(run, "plots")
    os.makedirs(out, exist_ok=True)
    written = []

    with edmio.load_spectrum(spec_path) as s, edmio.load_run(run) as f:
        # run.toml: the campaign's [screen] keys, and the run's own [screen] (its type, since edm run).
        screen = Screen((s.attrs, f.attrs), {**f.manifest.get("campaign", {}).get("screen", {}),
                                             **f.manifest.get("screen", {})})
        omega = need(s, "/axes/omega", "frequency axis")[...]
        omega_l = float(s.attrs["laser_omega"])
        nyq = float(s.attrs.get("nyquist_omega", omega[-1]))
        base, base_name = line_base(s, omega_l)
        ctx = {"screen": screen, "omega_l": omega_l, "nyq": nyq, "w": omega / omega_l, "base": base,
               "x": need(s, "/axes/x", "pixel x")[...], "y": need(s, "/axes/y", "pixel y")[...],
               "marks": harmonic_marks(s, omega_l, nyq), "aliases": aliases(base, nyq) if base else [],
               "window": text_attr_dict(s.attrs, "window", "?"), "field": text_attr_dict(s.attrs, "field", "E"),
               "at_omega": at_omega}
        plot_maps(s, ctx, out, written)
        plot_raw_spectra(s, ctx, out, written)
        warn_aliases(run, ctx, base_name)
        plot_field_and_gamma(f, s, screen, ctx["x"], ctx["y"], out, written)
        plot_direct(s, ctx, out, written)
        if not screen.angular:
            plot_twisted_light(s, ctx["x"], ctx["y"], screen.z, omega_l, ctx["marks"], out, written)

    for name in plotsave.forget_stale_plots(out, written):
        print(f"edm_plot.py: removed {os.path.join(out, name)} (the previous plot's, not drawn for this spectrum)", file=sys.stderr)
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    plotsave.unwind_on_signals()
    try:
        if len(sys.argv) >= 3 and sys.argv[1] == "--check-spectrum":
            sys.exit(check_main(sys.argv))
        sys.exit(main(sys.argv))
    except (PlotError, edmio.EdmioError, OSError, KeyError) as e:
        print(f"edm_plot.py: error: {e}", file=sys.stderr)
        sys.exit(1)
