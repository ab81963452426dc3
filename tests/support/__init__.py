"""Test support: every helper the tests share lives here (pytest fixtures stay in conftest files).

Test modules import helpers from `tests.support.*`, never from one another. Rigs that the
benchmarks (`bench/`) run too live in the top-level `harness/` package instead (whole-bot
processes, chaos and soak runs, their audit, paper-node signing, the paper chain rig); the
tests import those from there, and nothing in `harness/` or `bench/` imports `tests`.
"""
