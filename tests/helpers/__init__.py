"""Shared helpers for the tests (no tests here): task factories, the hostile corpus, CLI runners and fixtures."""
