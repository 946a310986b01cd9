"""A resolved stack, written back out: as a stack.toml with exact pins, or
as a requirements file for pip."""

from __future__ import annotations

import os
from typing import Any

from ..engine.builds import build_indexes
from ..knowledge.database import Database
from ..stack import Stack

__all__ = ["stack_toml", "requirements"]


def _system(stack: Stack) -> dict[str, Any]:
    system = stack.system
    table: dict[str, Any] = {"python": str(system.python), "platform": system.platform}
    if system.cuda is not None:
        table["cuda"] = str(system.cuda)
    if system.rocm is not None:
        table["rocm"] = str(system.rocm)
    if system.driver_written:
        table["driver"] = system.driver_written
    if system.index != "pypi":
        table["index"] = system.index  # the builds it installs come from there
    return table


def _hardware(stack: Stack) -> dict[str, Any]:
    hardware = stack.hardware
    table: dict[str, Any] = {}
    if hardware.gpu is not None:
        table["gpu"] = hardware.gpu.name
    elif hardware.compute_capability is not None:
        table["compute_capability"] = str(hardware.compute_capability)
    if table:
        table["count"] = hardware.count
    elif hardware.accelerator != "cpu" and stack.system.cuda is None and stack.system.rocm is None:
        table["accelerator"] = hardware.accelerator
    return table


def _compat(stack: Stack, path: str | None) -> dict[str, Any]:
    """[compat] as the stack has it. The overlay is a folder relative to the
    file that names it: relative to `path`'s folder when the text is to be
    written there, else absolute, so that the file read back names the same
    folder wherever it is written."""
    table: dict[str, Any] = {}
    if stack.ignore:
        table["ignore"] = list(stack.ignore)
    if stack.strict:
        table["strict"] = True
    if stack.require_known:
        table["require_known"] = True
    if stack.overlay is not None:
        folder = os.path.abspath(stack.overlay)
        if path is not None and path not in ("-", "/dev/stdin"):
            try:
                folder = os.path.relpath(folder, os.path.dirname(os.path.abspath(path)))
            except ValueError:  # another drive (Windows): only the absolute path names it
                pass
        table["overlay"] = folder.replace(os.sep, "/")
    return table


def stack_toml(stack: Stack, pins: dict[str, str], added: dict[str, str], *, path: str | None = None) -> str:
    """The stack with every package pinned, plus the tracked packages it pulls
    in; `path`, the file the text is for, makes its [compat] overlay relative."""
    import tomli_w

    data: dict[str, Any] = {}
    head = {k: v for k, v in (("name", stack.name), ("description", stack.description)) if v}
    if head:
        data["stack"] = head
    data["system"] = _system(stack)
    hardware = _hardware(stack)
    if hardware:
        data["hardware"] = hardware
    packages: dict[str, Any] = {}
    for name, spec in stack.packages.items():
        version = pins.get(name, spec.written)
        if spec.extras or spec.external:
            table: dict[str, Any] = {"version": version}
            if spec.extras:
                table["extras"] = sorted(spec.extras)
            if spec.external:
                table["external"] = True
            packages[name] = table
        else:
            packages[name] = version
    for name, version in sorted(added.items()):
        packages.setdefault(name, version)
    data["packages"] = packages
    if stack.options:
        data["options"] = {name: dict(values) for name, values in stack.options.items()}
    model = {k: v for k, v in stack.model._asdict().items() if v is not None}
    if model:
        data["model"] = model
    if stack.env:
        data["env"] = dict(stack.env)
    compat = _compat(stack, path)
    if compat:
        data["compat"] = compat
    header = "# Resolved by compat: every package pinned to the version chosen for this machine.\n"
    return header + tomli_w.dumps(data)


def requirements(stack: Stack, pins: dict[str, str], added: dict[str, str], db: Database) -> str:
    """pip's requirements format; applications that are not on an index are comments."""
    lines = [f"# Resolved by compat for Python {stack.system.python} on {stack.system.platform}."]
    everything = {**{n: pins.get(n, s.written) for n, s in stack.packages.items()}, **added}
    builds = build_indexes(stack, everything, db)
    for url in sorted({url for _, url in builds.values() if url}):
        lines.append(f"--extra-index-url {url}")
    for name, (_, url) in sorted(builds.items()):
        if url is None:
            lines.append(f"# {name}: its build comes from an index the database does not name")
    for name in sorted(everything):
        version = everything[name]
        spec = stack.packages.get(name)
        extras = f"[{','.join(sorted(spec.extras))}]" if spec is not None and spec.extras else ""
        component = db.component(name)
        label = builds.get(name, ("", None))[0]
        if label and "+" not in version:
            version = f"{version}+{label}"  # the local label makes pip take that index's build
        line = f"{name}{extras}=={version}"
        if component is not None and component.kind == "application":
            lines.append(f"# {line}  ({name} is an application, not a package on the index)")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"
