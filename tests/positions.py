"""Stacked positions shared by the tests: they live in ``conftest`` now; this name stays
for the test files that still import it from here."""

from conftest import heads_up_known

__all__ = ["heads_up_known"]
