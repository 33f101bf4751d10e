"""Package discovery for the build (the metadata is in pyproject.toml).

The architecture is visible at the top level of the repository; the build maps
those folders into the single import namespace ``mmverify``. Packages are
discovered, not listed: every folder with an ``__init__.py`` under ``mmverify/``
and under each mapped code folder is a package, so a new subpackage cannot be
left out of an install. The data folders (the bundled anchors and the Lean
project) travel inside the package so that an installed copy finds them
through importlib.resources; each of their folders is a package of data files.
"""
from __future__ import annotations

import os

from setuptools import find_packages, setup

ROOT = "mmverify"
# top-level folder -> its name under mmverify (code: discovered by __init__.py)
CODE = ("scoring", "gates", "lean_gen", "replay")
# data folders and the files of theirs that travel. The anchors' folders are
# named by task id (not identifiers, never importable): one package holds them
# all. The Lean project's folders are identifiers, so each is a package of its
# own files (else the build warns that an importable folder is left out).
ANCHORS = ("anchors", ["**/*.json", "**/*.md", "**/*.csv", "**/*.txt", "**/*.tsv", "**/*.csv.gz"])
DATA = {"LeanProofs": ["lean-toolchain", "lakefile.toml", "*.md", "*.lean"]}
SKIP = {"__pycache__", ".lake", ".hypothesis", ".pytest_cache"}


def _code_packages() -> tuple[list[str], dict[str, str]]:
    packages = [ROOT] + [f"{ROOT}.{p}" for p in find_packages(ROOT)]
    package_dir = {ROOT: ROOT}
    for folder in CODE:
        packages += [f"{ROOT}.{folder}"] + [f"{ROOT}.{folder}.{p}" for p in find_packages(folder)]
        package_dir[f"{ROOT}.{folder}"] = folder
    return packages, package_dir


def _data_packages() -> tuple[list[str], dict[str, str], dict[str, list[str]]]:
    """Every folder of a data folder, as a package of its data files (folder
    names that are not identifiers, such as a task id, are mapped one by one)."""
    packages, package_dir, package_data = [], {}, {}
    for folder, patterns in DATA.items():
        for here, dirs, _files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIP and not d.startswith("."))
            rel = os.path.relpath(here, folder)
            parts = [] if rel == "." else rel.split(os.sep)
            name = ".".join([ROOT, folder] + parts)
            packages.append(name)
            package_dir[name] = here.replace(os.sep, "/")
            package_data[name] = list(patterns)
    return packages, package_dir, package_data


def discover() -> tuple[list[str], dict[str, str], dict[str, list[str]]]:
    """(packages, package_dir, package_data) of the build."""
    code, code_dirs = _code_packages()
    data, data_dirs, data_files = _data_packages()
    folder, patterns = ANCHORS
    anchors = f"{ROOT}.{folder}"
    package_data = {f"{ROOT}.schemas": ["*.json"], anchors: patterns, **data_files}
    return sorted(set(code + data + [anchors])), {**code_dirs, **data_dirs, anchors: folder}, package_data


if __name__ == "__main__":
    packages, package_dir, package_data = discover()
    setup(packages=packages, package_dir=package_dir, package_data=package_data, include_package_data=False)
