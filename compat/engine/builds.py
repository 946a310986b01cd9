"""What a stack will really install: which build of each release, and whether
its wheels, its CUDA and its kernels fit the machine.

A release on the index is not one artifact. Its wheels carry platform tags
(``manylinux_2_34_x86_64``: Linux on x86-64 with glibc 2.34 or newer), and a
package such as torch is built several times, once per CUDA (or ROCm)
version, each build with kernels for a list of GPU architectures. The
database records builds (``[[build]]`` tables) with their sources; this
module picks the build an installer would take for a stack and says what
does not fit.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any


from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from .._record import Record
from ..knowledge.model import Build, Component, Release
from ..knowledge.platforms import PlatformEntry, platform_named

if TYPE_CHECKING:
    from ..knowledge.database import Database
from ..stack import PackageSpec, Stack, System

__all__ = ["Platform", "Selected", "WheelFit", "Problem", "select_build", "judge_build", "label_torch", "metadata_cuda",
           "wheel_fit", "build_indexes"]


# -- wheel tags --------------------------------------------------------------

class Platform(Record):
    """The tags a stack's interpreter and platform accept, as an installer's.
    Which platform tags fit a platform is the platform table's
    (``data/platforms.toml``, `PlatformEntry.glibc_of`)."""

    system: System
    # the entry of the platform table of the database checked against; None: the table the stack was bound with
    given: PlatformEntry | None = None

    @classmethod
    def of(cls, system: System, db: Database) -> Platform:
        """The platform of `system` as `db`'s platform table says (a name it lacks: the bound table's)."""
        return cls(system, db.platforms.get(system.platform))

    @property
    def python(self) -> tuple[int, int]:
        release = self.system.python.release
        return release[0], release[1]

    @property
    def entry(self) -> PlatformEntry:
        """The platform table's entry of the stack's platform."""
        entry = self.given if self.given is not None else platform_named(self.system.platform)
        if entry is None:
            raise ValueError(f"unknown platform {self.system.platform!r} (data/platforms.toml does not hold it)")
        return entry

    @property
    def key(self) -> tuple[Any, ...]:
        """What the tags a platform accepts depend on: the interpreter, the platform's entry, the glibc."""
        glibc = self.system.glibc
        return self.python, self.entry, glibc.release[:2] if glibc is not None else None

    def markers(self) -> dict[str, str]:
        """The PEP 508 environment of the stack's interpreter on this platform."""
        return self.system.marker_environment(self.entry.markers)

    def glibc_of(self, platform_tag: str) -> tuple[int, int] | None | bool:
        """The glibc a Linux wheel needs, False if the tag is not for this
        platform, None if it has no floor (``linux_x86_64``, ``any``)."""
        return self.entry.glibc_of(platform_tag)

    def accepts(self, interpreter: str, abi: str, platform_tag: str) -> tuple[int, int] | None | bool:
        """False if an installer on this stack would not take a wheel with
        this tag; otherwise the glibc it needs (None: none)."""
        return _accepts(self.key, interpreter, abi, platform_tag)


@functools.lru_cache(maxsize=4096)
def _accepts(key: tuple[Any, ...], interpreter: str, abi: str, platform_tag: str) -> tuple[int, int] | None | bool:
    # the same few tags recur across every release of a package
    python, entry, glibc = key
    floor = entry.glibc_of(platform_tag)
    if floor is False:
        return False
    if glibc is not None and floor is not None and floor > glibc:
        return False
    if (interpreter, abi) not in _interpreters(python):
        return False
    return floor


@functools.lru_cache(maxsize=16)
def _interpreters(python: tuple[int, int]) -> frozenset[tuple[str, str]]:
    """The (interpreter, abi) pairs of wheel tags CPython `python` installs:
    its own ABI, the stable ABI of CPython 3.2 up to it, and pure-Python
    tags of its version and older ones (the order packaging.tags gives them
    does not matter here, only the set). Written out rather than taken from
    packaging.tags, whose import (logging, platform, subprocess) would cost
    a check more than the whole tag test."""
    major, minor = python
    cp = f"cp{major}{minor}"
    pairs = {(cp, cp), (cp, "none"), (f"py{major}", "none")}
    for older in range(minor, -1, -1):
        pairs.add((f"py{major}{older}", "none"))
        if older >= 2:
            pairs.add((f"cp{major}{older}", "abi3"))
    return frozenset(pairs)


class WheelFit(Record):
    """How a release's wheels fit a stack's interpreter and platform."""

    installable: bool | None  # None: the snapshot records no wheel tags
    glibc: tuple[int, int] | None  # the lowest glibc among the wheels that fit (None: no floor or not Linux)
    platforms: tuple[str, ...]  # the platform tags the release has wheels for (for messages)


def wheel_fit(release: Release, platform: Platform) -> WheelFit:
    """How the release's wheels fit the platform: computed once per set of
    tags and platform in a process (a deployment script, a matrix or a test
    run checks the same releases on the same platform many times)."""
    tags = release.tags
    if not tags:
        return WheelFit(None, None, ())
    accepting = platform.key
    key = (tags, accepting)
    fit = _FITS.get(key)
    if fit is None:
        if len(_FITS) >= _MAX_FITS:
            _FITS.clear()
        fit = _FITS[key] = _wheel_fit(tags, accepting)
    return fit


_FITS: dict[tuple[tuple[str, ...], tuple[Any, ...]], WheelFit] = {}
_MAX_FITS = 1 << 16


def _wheel_fit(tags: tuple[str, ...], key: tuple[Any, ...]) -> WheelFit:
    floors = []
    seen: dict[str, None] = {}
    for text in tags:
        parts = text.split("-")
        if len(parts) != 3:
            continue
        # compressed tag sets (cp38.cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64) expand to their product
        for interpreter in parts[0].split("."):
            for abi in parts[1].split("."):
                for platform_tag in parts[2].split("."):
                    seen.setdefault(platform_tag, None)
                    fit = _accepts(key, interpreter, abi, platform_tag)
                    if fit is not False:
                        floors.append(fit)
    if not floors:
        return WheelFit(False, None, tuple(seen))
    if any(f is None for f in floors):
        return WheelFit(True, None, tuple(seen))
    return WheelFit(True, min(f for f in floors if f is not None), tuple(seen))


# -- builds --------------------------------------------------------------------


class Selected(Record):
    """The build of a release a stack installs, and how compat knows it."""

    build: Build
    how: str  # "label", "index", "default", "metadata"


def _cuda_runtime(name: str, runtimes: tuple[str, ...]) -> tuple[bool, str | None]:
    """Whether `name` is one of the CUDA runtime packages (cuda.toml), and its
    CUDA major suffix (``nvidia-cuda-runtime-cu12`` -> ``"12"``)."""
    for runtime in runtimes:
        if name == runtime:
            return True, None
        if name.startswith(runtime + "-cu") and name[len(runtime) + 3:].isdigit():
            return True, name[len(runtime) + 3:]
    return False, None


def metadata_cuda(release: Release, environment: dict[str, str], runtimes: tuple[str, ...]) -> tuple[Version, str] | None:
    """The CUDA a release's wheels were built with, where its own metadata pins
    the CUDA runtime (``cuda-toolkit==13.0.2``, ``nvidia-cuda-runtime-cu12==12.8.90``),
    with the line that says so."""
    for index, text in enumerate(release.requires_dist):
        if "cuda" not in text:
            continue
        requirement = release.requirement(index)
        runtime, major = _cuda_runtime(requirement.name.lower().replace("_", "-"), runtimes)
        if not runtime:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({**environment, "extra": ""}):
            continue
        pinned = [s for s in requirement.specifier if s.operator in ("==", "===")]
        if pinned:
            try:
                version = Version(pinned[0].version.rstrip(".*"))
            except InvalidVersion:
                continue
            return Version(f"{version.major}.{version.minor}"), f"{requirement.name}{requirement.specifier}"
        if major:
            # nvidia-cuda-runtime-cu12 with a range: CUDA 12, minor unknown
            return Version(str(int(major[:2]))), f"{requirement.name}{requirement.specifier}"
    return None


def select_build(
    component: Component, release: Release, spec: PackageSpec | None, stack: Stack, db: Database
) -> tuple[Selected | None, str | None]:
    """The build of `release` the stack installs, or None, and a problem
    (a label or index variant the database does not know for the release).

    A local version label in the stack's pin chooses the build; otherwise the
    stack's ``[system] index``; otherwise the package index's own wheels. What
    the release's own metadata pins (its CUDA runtime) counts as a build when
    the database lists none for the index.
    """
    version = release.version
    label = spec.build if spec is not None else None
    platform = stack.system.platform
    index = stack.system.index
    # builds split by platform (a build's aarch64 wheels carry other kernels) come first for the stack's own;
    # with neither a label nor another index, the package index's own builds alone are read
    builds = sorted(component.builds_for(version, None if label is not None or index != "pypi" else "pypi"),
                    key=lambda b: not _on_platform(b, stack))
    if label is not None:
        chosen = [b for b in builds if b.label == label]
        if chosen and _on_platform(chosen[0], stack):
            return Selected(chosen[0], "label"), None
        if chosen:  # its facts are stated for other platforms: this one's build is not known, not absent
            return None, f"the database knows no {platform} build of {component.name} {version} labelled +{label}"
        named = label_build(component.name, version, label, db)
        if named is not None:
            return Selected(named, "label"), None
        return None, f"the database knows no build of {component.name} {version} labelled +{label}"
    if index != "pypi":
        chosen = [b for b in builds if b.index == index]
        if chosen and _on_platform(chosen[0], stack):
            return Selected(chosen[0], "index"), None
        if chosen:
            return None, f"the database knows no {platform} {index} build of {component.name} {version}"
        # a package whose builds the database tracks (for this release or others): not knowing this one's is said
        if any(b.index != "pypi" for b in builds) or component.has_builds:
            return None, f"the database knows no {index} build of {component.name} {version}"
    chosen = [b for b in builds if b.index == "pypi" and _on_platform(b, stack)]
    if chosen:
        return Selected(chosen[0], "default"), None
    found = metadata_cuda(release, Platform.of(stack.system, db).markers(), db.cuda.runtimes)
    if found is not None:
        cuda, line = found
        build = Build(
            id=f"{component.name}.index-metadata",
            package=component.name,
            releases=SpecifierSet(f"=={version}"),
            index="pypi",
            accelerator="cuda",
            source=f"metadata:{component.name}=={version}",
            cuda=cuda,
            needs_gpu=False,
            note=f"its metadata pins {line}",
            layer="metadata",
        )
        return Selected(build, "metadata"), None
    if component.has_builds:  # a package whose builds the database tracks, with none known for this release
        return None, f"the database knows no build of {component.name} {version}"
    return None, None


def label_torch(label: str) -> tuple[Version, Version] | None:
    """The CUDA and the torch release a label of the form FlashAttention's
    wheels carry names (``cu12torch2.6cxx11abifalse``: CUDA 12, torch 2.6;
    ``cu124torch2.4``: CUDA 12.4), or None for any other label. Two digits
    after ``cu`` are a CUDA major (CUDA has had two-digit majors since 10),
    three a major and its minor, as PyTorch's own labels write them.

    >>> label_torch("cu12torch2.6cxx11abifalse"), label_torch("cu124torch2.4"), label_torch("cu128")
    ((<Version('12')>, <Version('2.6')>), (<Version('12.4')>, <Version('2.4')>), None)
    """
    match = _TORCH_LABEL.fullmatch(label)
    if match is None:
        return None
    digits = match.group(1)
    cuda = Version(digits) if len(digits) == 2 else Version(f"{digits[:2]}.{digits[2:]}")
    return cuda, Version(match.group(2))


_TORCH_LABEL = re.compile(r"cu(\d{2,3})torch(\d{1,2}\.\d{1,3})(?:cxx11abi(?:true|false))?")


def build_indexes(stack: Stack, pins: dict[str, str], db: Database) -> dict[str, tuple[str, str | None]]:
    """The packages whose build comes from another index than the package
    index: name -> (the build's local label, or "", the URL of its index
    when the database knows it: PyTorch's indexes), for the pinned
    formats (requirements, pylock) to write where each comes from."""
    found: dict[str, tuple[str, str | None]] = {}
    for name, written in pins.items():
        component = db.component(name)
        if component is None or not component.has_builds:
            continue
        try:
            version = Version(written)
        except InvalidVersion:
            continue
        release = component.release(Version(version.public))
        if release is None:
            continue
        selected, _ = select_build(component, release, stack.packages.get(name), stack, db)
        if selected is None or selected.build.index == "pypi":
            continue
        build = selected.build
        base = db.cuda.label_index
        url = f"{base.rstrip('/')}/{build.index}" if base and db.cuda.label(build.index) is not None else None
        found[name] = (build.label or "", url)
    return found


def label_build(package: str, version: Version, label: str, db: Database) -> Build | None:
    """What a label says by itself, for a build the database does not list:
    one of PyTorch's form (``cu128``: CUDA 12.8, ``rocm6.4``, ``cpu``; the
    prefixes are cuda.toml's), or one that names the torch it was built
    for (`label_torch`); nothing is known of its GPU architectures."""
    said = db.cuda.label(label)
    if said is None:
        named = label_torch(label) if db.cuda.torch_label_sources else None  # read where cuda.toml says what they mean
        if named is None:
            return None
        return Build(
            id=f"{package}.+{label}",
            package=package,
            releases=SpecifierSet(f"=={version}"),
            index=label,  # the project's own wheels (a GitHub release), not the package index's
            accelerator="cuda",
            source=db.cuda.torch_label_sources[0],
            label=label,
            cuda=named[0],
            needs_gpu=False,
            note=f"its local label +{label}: a build for CUDA {named[0]} and torch {named[1]}",
            layer="stack",
        )
    accelerator, number = said
    cuda = number if accelerator == "cuda" else None
    rocm = number if accelerator == "rocm" else None
    source = db.cuda.label_source
    assert source is not None
    return Build(
        id=f"{package}.+{label}",
        package=package,
        releases=SpecifierSet(f"=={version}"),
        index=label,
        accelerator=accelerator,
        source=source,
        label=label,
        cuda=cuda,
        rocm=rocm,
        needs_gpu=False,
        note=f"its local label +{label}",
        layer="stack",
    )


def _on_platform(build: Build, stack: Stack) -> bool:
    return not build.platforms or stack.system.platform in build.platforms


class Problem(Record):
    """What does not fit between a build and a stack: the finding's kind,
    severity, the end of its message, the components it involves."""

    kind: str
    severity: str
    text: str
    components: tuple[str, ...]
    details: dict[str, Any]
    source: str | None = None  # where the finding rests on another fact than the build's own
    basis: str | None = None  # set when it is inferred: what it rests on


def judge_build(build: Build, stack: Stack, db: Database) -> list[Problem]:
    """Every way `build` does not fit the stack: accelerator, CUDA, driver,
    GPU architecture, platform. Errors first; a build that errs cannot run."""
    system, hardware = stack.system, stack.hardware
    out: list[Problem] = []
    accelerator = hardware.accelerator
    if build.accelerator == "cuda" and (system.rocm is not None or accelerator == "rocm"):
        return [Problem("accelerator", "error", ", which runs on NVIDIA GPUs; the stack runs on ROCm", ("gpu",), {})]
    if build.accelerator == "rocm" and (system.cuda is not None or accelerator == "cuda"):
        return [Problem("accelerator", "error", ", which runs on AMD GPUs; the stack runs on CUDA", ("gpu",), {})]
    if build.accelerator == "cuda" and build.needs_gpu and accelerator in ("cpu", "mps"):
        device = "no GPU" if accelerator == "cpu" else "an Apple GPU"
        return [Problem("accelerator", "error", f", which needs an NVIDIA GPU; the stack has {device}", ("gpu",), {})]
    if build.accelerator == "cpu" and accelerator in ("cuda", "rocm"):
        return [Problem("accelerator", "warning", ": it will not use the stack's GPU", ("gpu",), {})]
    if build.cuda is not None:
        majors = {c.major for c in build.cudas} or {build.cuda.major}  # a library per runtime: any of them
        if system.cuda is not None and system.cuda.major not in majors:
            loads = (f"its libraries are for CUDA {', '.join(str(c) for c in build.cudas)} only" if build.cudas
                     else f"a CUDA {build.cuda.major} build loads libcudart.so.{build.cuda.major}")
            out.append(Problem(
                "build-cuda", "error", f"; the stack says CUDA {system.cuda} ({loads})",
                ("cuda",), {"requirement": f"cuda=={build.cuda}", "found": str(system.cuda)},
            ))
        floor = db.driver_floor(build.cuda)
        # A build of the stack's own CUDA major is judged once, with the stack's CUDA.
        own = system.cuda is not None and system.cuda.major == build.cuda.major
        if floor is not None and system.driver is not None and not own and system.driver < floor[0]:
            out.append(Problem(
                "driver", "error",
                f", which needs NVIDIA driver {floor[0]} or newer; the stack has {system.driver_written or system.driver}",
                ("driver",), {"requirement": f"driver>={floor[0]}", "found": str(system.driver)},
            ))
    capability = hardware.compute_capability
    if build.archs and capability is not None and accelerator == "cuda" and not build.serves(capability):
        gpu = hardware.gpu.name if hardware.gpu is not None else "the GPU"
        sm = "sm_" + str(capability).replace(".", "")
        out.append(Problem(
            "arch", "warning" if build.archs_basis else "error",  # a list inferred for these releases: a warning
            f", which carries kernels for {build.arch_text()} only; {gpu} is {sm} "
            "(it fails with \"no kernel image is available for execution on the device\")",
            ("gpu",), {"found": sm},
        ))
    # a build whose list is not known, made with a CUDA that compiles no kernels for the GPU's family
    # (cuda.toml [[sass]]): it runs there only through PTX, which nothing here says it carries
    floor = db.cuda.sass_floor(capability) if capability is not None else None
    too_old = (not build.archs and build.accelerator == "cuda" and accelerator == "cuda" and floor is not None
               and build.cuda is not None and len(build.cuda.release) >= 2 and build.cuda < floor[0])
    if too_old:
        assert floor is not None and capability is not None
        gpu = hardware.gpu.name if hardware.gpu is not None else "the GPU"
        sm = "sm_" + str(capability).replace(".", "")
        out.append(Problem(
            "arch", "warning",
            f": no CUDA before {floor[0]} compiles kernels for {gpu} ({sm}), so it runs there only if it carries "
            "PTX, which nothing here says (without it: \"no kernel image is available for execution on the device\")",
            ("gpu",), {"found": sm}, source=floor[1],
            basis=f"inferred: the build's architecture list is not known; it was made with CUDA {build.cuda}, and "
                  f"kernels for {sm} need CUDA {floor[0]} or newer",
        ))
    # a build compat infers (from a local label, or a release's CUDA pins) says nothing of its kernels: say so
    # (a curated build without architectures is one whose sources give none: docs/coverage.md lists them)
    if not build.archs and build.layer != "curated" and build.accelerator == "cuda" and capability is not None \
            and accelerator == "cuda" and not too_old:
        gpu = hardware.gpu.name if hardware.gpu is not None else "the GPU"
        sm = "sm_" + str(capability).replace(".", "")
        out.append(Problem(
            "arch-unknown", "info",
            f"; the GPU architectures it carries kernels for are not known, so whether it runs on {gpu} ({sm}) "
            "is not checked", ("gpu",), {"found": sm},
        ))
    if build.platforms and system.platform not in build.platforms:
        out.append(Problem(
            "build-platform", "error",
            f", which has wheels for {', '.join(build.platforms)} only; the stack is {system.platform}", ("python",), {},
        ))
    return out
