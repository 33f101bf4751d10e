"""mmverify: verification-centric scoring of mathematical-modelling answers."""
__version__ = "0.1.0"
