# ctest-label: unit
"""edm_plot.py's ℓ label says what `edm spectrum`'s line says (issue 29: a plot titled
"ℓ = +4.002 (winding +4, 2/4 rings, rings disagree)" while the line gave the reason per ring):
synthetic /oam arrays, one per case of /oam/cut, against the expected words."""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.environ["EDM_SOURCE_DIR"], "share", "plot"))
import edm_plot  # noqa: E402


def oam(cut, ell, winding, accepted=None):
    cut = np.array([[cut, cut]], dtype=float)
    nr = cut.shape[-1]
    return {"/oam/ell": np.array([[ell, ell]]), "/oam/radius": np.arange(nr, dtype=float),
            "/oam/accepted": np.array([[accepted if accepted is not None else nr] * 2]),
            "/oam/cut": cut, "/oam/ell_winding": np.array([[winding, winding]])}


cases = [
    (oam([0, 0, 0, 0], 2.0004, 2), "ℓ = +2.000 (winding +2 on 4 of 4 rings)"),
    (oam([4, 3, 0, 0], 4.002, 4), "ℓ = +4.002 (winding +4 on 2 of 4 rings; 1 with phase residual above the cut; "
                                  "1 with another winding)"),
    (oam([2, 0, 0, 1], -1.0, -1), "ℓ = -1.000 (winding -1 on 2 of 4 rings; 1 refused; 1 below the noise floor)"),
    (oam([5, 5, 5, 2], math.nan, 0), "no common winding (3 of 4 rings wind differently; 1 below the noise floor)"),
    (oam([2, 2, 3, 3], math.nan, 0), "no ℓ: no ring passes the quality cuts (4 rings; 2 below the noise floor; "
                                     "2 with phase residual above the cut)"),
    (oam([1, 1], math.nan, 0, accepted=0), "no fit: refused on all 2 rings"),
]
bad = 0
for s, want in cases:
    got = edm_plot.ell_label(s, 0, 0)
    print(("ok   " if got == want else "FAIL ") + got)
    if got != want:
        print("     expected " + want)
        bad += 1
sys.exit(f"{bad} label(s) differ" if bad else 0)
