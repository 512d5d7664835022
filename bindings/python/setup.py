"""Build hooks: bundle libmcpc.so into the wheel when one is at hand.

The library bundled is, in order: $MCPC_BUNDLE_LIBRARY (a path; "none" bundles
nothing), else ../../target/release/libmcpc.so of the source tree. A wheel with the
library inside is tagged for this platform (py3-none-<platform>: ctypes needs no
particular Python ABI); without one it is a pure wheel that finds the library at run
time (MCPC_LIBRARY, the system's library path).
"""

import os
import shutil
from pathlib import Path
from typing import Optional

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent


def library_to_bundle() -> Optional[Path]:
    env = os.environ.get("MCPC_BUNDLE_LIBRARY")
    if env:
        return None if env == "none" else Path(env)
    candidate = HERE.parents[1] / "target" / "release" / "libmcpc.so"
    return candidate if candidate.exists() else None


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        lib = library_to_bundle()
        dest = Path(self.build_lib) / "libmcpc" / "libmcpc.so"
        if lib is not None:
            if not lib.exists():
                raise FileNotFoundError("MCPC_BUNDLE_LIBRARY: no such file: %s" % lib)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(lib, dest)  # follows symlinks
        elif dest.exists():
            dest.unlink()  # left over from an earlier build


class BinaryDistribution(Distribution):
    """With a library inside, the package is platform-specific (installed to
    platlib, and the wheel's root is not pure)."""

    def has_ext_modules(self) -> bool:
        return library_to_bundle() is not None


class BdistWheel(bdist_wheel):
    def get_tag(self):  # type: ignore[no-untyped-def]
        python, abi, plat = super().get_tag()
        if not self.root_is_pure:
            return "py3", "none", plat
        return python, abi, plat


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel})
