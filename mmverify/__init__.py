"""mmverify: verification-centric scoring of mathematical-modelling answers."""
__version__ = "0.1.0"


def __getattr__(name):
    # ``mmverify.reward`` is loaded on first use, so ``import mmverify`` stays
    # cheap (no sympy, numpy or jsonschema at import time).
    if name == "reward":
        from mmverify.plugin.reward import reward

        return reward
    raise AttributeError(f"module 'mmverify' has no attribute {name!r}")
