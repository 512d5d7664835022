"""Build hooks: bundle libmcpc.so into the wheel when one is at hand.

The library bundled is, in order:

- $MCPC_BUNDLE_LIBRARY (a path; "none" bundles nothing);
- in the sdist (`make python-sdist`), whose Rust sources are in native/: the library
  built from them with `cargo build --release --locked` ($CARGO names cargo, and cargo
  honours $CARGO_TARGET_DIR and $CARGO_BUILD_JOBS). This needs a Rust toolchain, of
  the version native/Cargo.toml's rust-version names or later, and crates.io;
- else ../../target/release/libmcpc.so of the source tree (mcpc.dll on Windows).

On Windows the DLL keeps cargo's name, mcpc.dll, which the loader (_ffi.py) looks for.
A win_amd64 wheel can be made on another machine too: MCPC_BUNDLE_LIBRARY names a
mcpc.dll cross-built with `make windows`, and bdist_wheel's --plat-name=win_amd64 tags
it (the library is found by its name, so no Windows Python is needed to build it).

A wheel with the library inside is tagged for this platform (py3-none-<platform>:
ctypes needs no particular Python ABI); without one it is a pure wheel that finds the
library at run time (MCPC_LIBRARY, the system's library path).
"""

import json
import os
import re
import shutil
import subprocess
import sys
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
NATIVE = HERE / "native"
# The library as cargo names it on this platform.
NATIVE_NAME = "mcpc.dll" if sys.platform == "win32" else "libmcpc.so"
TREE_LIBRARY = HERE.parents[1] / "target" / "release" / NATIVE_NAME
# The names the package may carry it under (_ffi.py's); anything else becomes libmcpc.so.
BUNDLED_NAMES = ("libmcpc.so", "mcpc.dll")


def from_sources() -> bool:
    """An sdist: the Rust sources are in native/."""
    return (NATIVE / "Cargo.toml").exists()


def bundles_library() -> bool:
    env = os.environ.get("MCPC_BUNDLE_LIBRARY")
    if env:
        return env != "none"
    return from_sources() or TREE_LIBRARY.exists()


def build_from_sources() -> Path:
    """Runs cargo in native/ and returns the library it built."""
    cargo = os.environ.get("CARGO") or "cargo"
    if shutil.which(cargo) is None:
        m = re.search(r'^rust-version\s*=\s*"([^"]+)"', (NATIVE / "Cargo.toml").read_text(), re.M)
        raise SystemExit(
            "libmcpc: building from source needs a Rust toolchain (Rust %s or later), and there "
            "is no `%s` on PATH. Install Rust (https://rustup.rs) or set CARGO to cargo's path, "
            "or install a prebuilt wheel: pip install --only-binary=libmcpc libmcpc"
            % (m.group(1) if m else "stable", cargo)
        )
    manifest = str(NATIVE / "Cargo.toml")
    build = [cargo, "build", "--release", "--locked", "--lib", "--manifest-path", manifest]
    if subprocess.run(build).returncode != 0:
        raise SystemExit("libmcpc: `%s` failed (its output is above)" % " ".join(build))
    meta = subprocess.run([cargo, "metadata", "--format-version", "1", "--no-deps", "--manifest-path", manifest],
                          stdout=subprocess.PIPE, check=True)
    return Path(json.loads(meta.stdout)["target_directory"]) / "release" / NATIVE_NAME


def library_to_bundle() -> Optional[Path]:
    env = os.environ.get("MCPC_BUNDLE_LIBRARY")
    if env:
        return None if env == "none" else Path(env)
    if from_sources():
        return build_from_sources()
    return TREE_LIBRARY if TREE_LIBRARY.exists() else None


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        lib = library_to_bundle()
        pkg = Path(self.build_lib) / "libmcpc"
        for name in BUNDLED_NAMES:
            if (pkg / name).exists():
                (pkg / name).unlink()  # left over from an earlier build
        if lib is not None:
            if not lib.exists():
                raise FileNotFoundError("libmcpc: no library to bundle at %s" % lib)
            dest = pkg / (lib.name if lib.name in BUNDLED_NAMES else "libmcpc.so")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(lib, dest)  # follows symlinks


class BinaryDistribution(Distribution):
    """With a library inside, the package is platform-specific (installed to
    platlib, and the wheel's root is not pure)."""

    def has_ext_modules(self) -> bool:
        return bundles_library()


class BdistWheel(bdist_wheel):
    def get_tag(self):  # type: ignore[no-untyped-def]
        python, abi, plat = super().get_tag()
        if not self.root_is_pure:
            return "py3", "none", plat
        return python, abi, plat


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel})
