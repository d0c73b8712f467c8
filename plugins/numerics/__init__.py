"""Numerics shared by plugins of several kinds, in one place.

- :mod:`.simplex`: Euclidean projection onto the probability simplex (Norm-Sub, Power, EM, Blender);
- :mod:`.noise`: an oracle's noise level and the significance threshold (Base-Cut, Calibrate, the
  heavy-hitter metrics);
- :mod:`.posterior`: posterior means under Gaussian noise and a discrete prior (Calibrate, Power,
  the prior families).
"""
