"""Which Python scripts/setup.sh installs f2loopy into.

A system Python marked externally managed (PEP 668: Debian 12, Ubuntu 24.04
and later ship ``EXTERNALLY-MANAGED`` in the standard library's folder)
refuses ``pip install`` outside a virtual environment.  There setup.sh
creates ``.venv`` in the checkout and installs into it; elsewhere (a virtual
environment, pyenv, conda, a Python of one's own) it installs into
``python3`` as it is.

``python3 scripts/setup_python.py`` prints ``venv`` or ``here``.
"""

import os
import sys
import sysconfig


def needs_venv(prefix: str, base_prefix: str, stdlib: str) -> bool:
    """True for an interpreter outside a virtual environment whose standard
    library carries the PEP 668 marker."""
    return prefix == base_prefix and os.path.isfile(os.path.join(stdlib, "EXTERNALLY-MANAGED"))


if __name__ == "__main__":
    print("venv" if needs_venv(sys.prefix, sys.base_prefix, sysconfig.get_path("stdlib"))
          else "here")
