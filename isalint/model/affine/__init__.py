"""Exact affine (polynomial) values of registers in a loop iteration, for proving address chains."""
