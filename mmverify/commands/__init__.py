"""One module per CLI sub-command; see :mod:`mmverify.cli`."""
