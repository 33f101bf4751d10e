"""Scoring core: metric kernels, named rules, panel averaging (O-EVAL), MULTI-BO."""
