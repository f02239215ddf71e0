"""Packaging: everything is declared in pyproject.toml, except one step.

A wheel must carry the runtime (C and Fortran sources, F2Loopy.cmake, the
CMake package configuration), the transformation recipes and the samples
(``f2loopy samples DIR``), which live in the top-level runtime/, transforms/
and samples/ folders of a checkout, and the documentation's tutorial and
cookbook files (docs/tutorial/, docs/cookbook/: ``f2loopy samples DIR`` copies
them too).  The build step
copies them into the package as f2loopy/_data/ (f2loopy.resources finds them
there); an editable install reads them from the checkout instead.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA = ("runtime", "transforms", "samples")
# the tutorial's application and the cookbook's files, for f2loopy samples DIR
DOC_EXAMPLES = ("tutorial", "cookbook")
# (and what translating or building the samples in the checkout left there)
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "tests", "*.o", "*.mod", "*.cl",
                              "*_cl.py", "*_cl.f90", "*_cl.c", "*.d", "build")


class build_py_with_data(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in DATA:
            target = Path(self.build_lib) / "f2loopy" / "_data" / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(ROOT / name, target, ignore=SKIP)
        for name in DOC_EXAMPLES:
            target = Path(self.build_lib) / "f2loopy" / "_data" / "docs" / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(ROOT / "docs" / name, target, ignore=SKIP)


setup(cmdclass={"build_py": build_py_with_data})
