"""`compat db lint`: the whole database, checked at once.

Lint reads what a check reads and more (every line of every snapshot, every
table of every file), and reports every problem it finds, each once, with
its file, line and key where they are known: a broken file is a problem to
report, never a reason for lint itself to stop.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .._names import normalize
from ..errors import CompatError
from ._schema import one_line
from .catalog import GpuCatalog, lookup_key
from .database import Database
from .graph import GRAPH_FILE, build_graph, read_graph
from .layers import catalog_files, layer_name, layer_problems, model_catalogs, sources_file
from .conditions import option_key
from .models import MODELS_FILE, check_catalog
from .options import OPTIONS_DIR
from .platforms import PLATFORMS_FILE
from .snapshot import snapshot_problems

__all__ = ["Problem", "lint_database"]


@dataclass(frozen=True)
class Problem:
    """One problem, printed as one line: ``file[:line]: [key: ]message``."""

    file: str
    key: str | None
    message: str
    line: int | None = None
    layer: str | None = None  # the layer of the file, in a database of several (layers.py)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        text = f"{where}: {self.key + ': ' if self.key else ''}{self.message}"
        return f"{text} [{self.layer}]" if self.layer else text


def lint_database(db: Database) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[Problem] = set()

    def add(file: str | None, key: str | None, message: str, line: int | None = None) -> None:
        problem = Problem(file or str(db.root), one_line(key, 200) if key else None, one_line(message), line, layer_name(db, file))
        if problem not in seen:  # a broken file met twice (its snapshot, then its component) is one problem
            seen.add(problem)
            problems.append(problem)

    unread_files: list[str | None] = []  # files that did not load: the sources they cite are unknown

    def failed(exc: CompatError, *, unread: bool = False) -> None:
        add(exc.file, exc.key, exc.message, exc.line)
        if unread:
            unread_files.append(exc.file)

    # A file that does not load is one problem: the facts that refer to it
    # are not checked against it (no "unknown source" for every citation).
    sources: dict[str, Any] | None
    try:
        sources = db.sources
    except CompatError as exc:
        failed(exc)
        sources = None
    try:
        catalog = db.catalog
    except CompatError as exc:
        failed(exc, unread=True)
        catalog = None
    cited: set[str] = set()

    def cite(file: str | None, key: str, source: str | None, required: bool = True) -> None:
        if source is None:
            if required:
                add(file, key, "has no source")
            return
        cited.add(source)
        if sources is not None and source not in sources:
            add(file, key, f"cites unknown source {source!r}")

    if catalog is not None:
        gpu_files = catalog_files(db, "gpus.toml", [gpu.name for gpu in catalog.gpus])
        for gpu in catalog.gpus:
            gpu_file = gpu_files[gpu.name]
            cite(gpu_file, f"gpu[{gpu.name!r}].source", gpu.source)
            # a check reads one [[gpu]] table by a line scan: it must agree with the full parse
            for name in (gpu.name, *gpu.aliases):
                try:
                    found = GpuCatalog.find_in_file(gpu_file, name)
                except CompatError as exc:
                    failed(exc)
                    break
                if found != catalog.find(name):
                    add(gpu_file, f"gpu[{gpu.name!r}]", f"{name!r} is not found by a line scan; write name and aliases on one line each")
        for gpu_name, message in catalog.naming_problems():  # vendor words alone, a spelling two GPUs share
            add(gpu_files.get(gpu_name), f"gpu[{gpu_name!r}]", message)
        architectures = {g.architecture for g in catalog.gpus}
        gpu_keys = {lookup_key(g.name) for g in catalog.gpus}
        hosts = {gpu.name: (gpu_files[gpu.name], gpu.host) for gpu in catalog.gpus if gpu.host is not None}
    else:
        architectures, gpu_keys, hosts = None, None, {}

    model_keys: set[str] | None = set()
    try:
        models = db.models
        model_problems = [(file, key, message) for file, own in model_catalogs(db)
                          for key, message in check_catalog(own, file)]
        model_files = catalog_files(db, MODELS_FILE, [model.name for model in models.models])
    except CompatError as exc:
        failed(exc, unread=True)
        model_keys = None
    else:
        for file, key, message in model_problems:
            add(file, key, message)
        for model in models.models:
            cite(model_files[model.name], f"model[{model.name!r}].source", model.source)
            model_keys.update(model.identities())  # type: ignore[union-attr]

    try:
        names = db.names()
    except CompatError as exc:  # the names graph: which components exist is unknown
        failed(exc)
        return problems
    rule_ids: dict[str, str] = {}
    loaded = []  # the components that load (the others are reported once)
    broken_snapshots = False
    for name in sorted(names):
        snapshot = db.snapshot_path(name)  # the one in use; layer_problems lints those it hides
        if os.path.exists(snapshot):
            found = snapshot_problems(snapshot)  # every line, not only the ones a check decodes
            for exc in found:
                failed(exc)
            broken_snapshots = broken_snapshots or bool(found)
        try:
            component = db.component(name)
            if component is not None:
                # read lazily by a check: a bad version in the release list, a rule or
                # a build that does not parse, is this component's problem
                len(component.releases), component.rules, component.builds
        except CompatError as exc:
            failed(exc, unread=True)
            continue
        if component is None:
            continue
        loaded.append(component)
        try:
            catalog = db.option_catalog(name)
        except CompatError as exc:
            failed(exc, unread=True)
            catalog = None
        if catalog is not None:
            for key, message in catalog.problems():
                add(catalog.file, key, message)
            if catalog.abbreviations is not None:  # the [parser] table: why prefixes of flags are taken
                cite(catalog.file, "parser.source", catalog.abbreviations)
            if catalog.gpus is not None:  # the [gpus] table and the sources of its flags
                cite(catalog.file, "gpus.source", catalog.gpus.source)
                for flag, source in catalog.gpus.sources:
                    cite(catalog.file, f"gpus.sources.{flag}", source)
            for option in catalog.options:
                cite(catalog.file, f"{option.key}.source", option.source)
                declared = component.options.get(option_key(option.name))
                if declared is not None and declared.values:
                    add(component.file, f"options.{declared.name}.values",
                        f"--{option.name}'s values are listed in {catalog.file}: one home (keep only summary and default here)")
        file = component.file
        for option in component.options.values():
            cite(file, f"options.{option.name}.source", option.source)
        for release in component.releases.values():
            if release.layer == "curated" or release.source:
                cite(release.file, f"release {release.version}.source", release.source)
            for dependency in release.curated:
                target = dependency.requirement.name
                if normalize(target) not in names:
                    add(release.file, f"release {release.version}.requires",
                        f"names {target!r}, which the database does not track")
        if component.kind == "application" and not component.releases:
            add(file, "release", "an application needs at least one curated release")
        for rule in component.rules:
            key = f"rule {rule.id}"
            file = rule.file or component.file  # (a layer's rules join another layer's component)
            if rule.id in rule_ids:
                add(file, key, f"ID also used in {rule_ids[rule.id]}")
            rule_ids[rule.id] = file or name
            cite(file, f"{key}.source", rule.source)
            for index, also in enumerate(rule.also):
                cite(file, f"{key}.also[{index}]", also)
            fixed_elsewhere = rule.kind == "known-issue" and rule.fixed_in is not None
            if component.releases and not fixed_elsewhere and not any(rule.covers(v) for v in component.releases):
                add(file, f"{key}.releases", f"{rule.releases} covers no release of {name} in the database")
            if rule.fixed_in is not None:
                if rule.kind != "known-issue":
                    add(file, f"{key}.fixed_in", "only known issues have fixed_in")
                elif rule.covers(rule.fixed_in):
                    add(file, f"{key}.fixed_in", f"{rule.fixed_in} is inside the affected range {rule.releases}")
            for partner in rule.partners:
                if partner not in names:
                    add(file, f"{key}.with", f"names {partner!r}, which the database does not track")
            for condition in (rule.when, rule.require):
                if condition is None:
                    continue
                for test in condition.walk():
                    if test.kind == "option" and catalog is not None and catalog.canonical(test.key) not in (None, test.key):
                        add(file, key, f"tests --{test.key}, an alias: write the flag's name --{catalog.canonical(test.key)}")
                    elif test.kind == "option" and test.key not in component.options and not (
                        catalog is not None and catalog.knows(test.key)
                    ):
                        add(file, key, f"tests option {test.key!r}, which [options] of {name} does not declare")
                    elif test.kind == "package" and test.key not in names:
                        add(file, key, f"tests package {test.key!r}, which the database does not track")
                    elif test.kind == "choice" and test.key == "gpu" and gpu_keys is not None:
                        for value in test.choices:
                            if value not in gpu_keys:
                                add(file, key, f"names GPU {value!r}, which the catalog lacks")
                    elif test.kind == "model-identity" and model_keys is not None:
                        for value, written in zip(test.choices, test.expect):
                            if value not in model_keys:
                                add(file, key, f"names model {written!r}, which the model catalog lacks")
                    elif test.kind == "choice" and test.key == "gpu_arch" and architectures is not None:
                        for value in test.choices:
                            if value not in architectures:
                                add(file, key, f"names architecture {value!r}, which no GPU of the catalog has")
    build_ids: dict[str, str] = {}
    options_dir = os.path.join(db.root, OPTIONS_DIR)
    if os.path.isdir(options_dir):
        for entry in sorted(os.listdir(options_dir)):
            if entry.endswith(".toml") and entry[: -len(".toml")] not in names:
                add(os.path.join(options_dir, entry), None, "names no component of the database")
    for component in loaded:
        for build in component.builds:
            key = f"build {build.id}"
            if build.id in build_ids:
                add(build.file, key, f"ID also used in {build_ids[build.id]}")
            build_ids[build.id] = build.file or component.name
            cite(build.file, f"{key}.source", build.source)
            for index, also in enumerate(build.also):
                cite(build.file, f"{key}.also[{index}]", also)
            if build.archs_source:
                cite(build.file, f"{key}.archs_source", build.archs_source)
            if build.requires_source:
                cite(build.file, f"{key}.requires_source", build.requires_source)
            if component.releases and not any(build.covers(v) for v in component.releases):
                add(build.file, f"{key}.releases", f"{build.releases} covers no release of {component.name} in the database")
    try:
        # against snapshots that read: a broken one is reported above, not twice
        graph = read_graph(db.metadata_dir) or {}  # the bottom layer's (layer_problems checks the others')
        if graph and not broken_snapshots and graph != build_graph(db.metadata_dir):
            add(os.path.join(db.metadata_dir, GRAPH_FILE), None,
                "does not match the snapshots (compat db sync writes it)")
    except CompatError as exc:
        failed(exc)
    for name in sorted(db.derived_names() - names):
        for stem in db.derived_stems()[name]:
            from .derived import derived_path

            add(derived_path(db.root, stem), "package", f"derived facts of {name!r}, which the database does not track")
    for exc in layer_problems(db):  # the layers over the bundled database: the snapshots they hide, their own files
        failed(exc)
    try:
        cuda = db.cuda
    except CompatError as exc:
        failed(exc, unread=True)
    else:
        cuda_file = os.path.join(db.root, "cuda.toml")
        for major, (_, source) in sorted(cuda.drivers.items()):
            cite(cuda_file, f"driver {major}.source", source)
        if cuda.runtimes:
            cite(cuda_file, "runtime.source", cuda.runtime_source)
        if cuda.labels:
            cite(cuda_file, "labels.source", cuda.label_source)
        for index, source in enumerate(cuda.torch_label_sources):
            cite(cuda_file, "torch_labels.source" if index == 0 else f"torch_labels.also[{index - 1}]", source)
        for index, (_, _, source) in enumerate(cuda.sass_floors):
            cite(cuda_file, f"sass[{index}].source", source)
    try:
        pythons = db.pythons
    except CompatError as exc:
        failed(exc, unread=True)
    else:
        for python in pythons:
            cite(os.path.join(db.root, "python.toml"), f"python {python.version}.source", python.source)
    try:
        platforms = db.platforms
    except CompatError as exc:
        failed(exc, unread=True)
    else:
        platforms_file = os.path.join(db.root, PLATFORMS_FILE)
        own = platforms.file == platforms_file  # else the bundled table, whose sources this folder need not hold
        for entry in platforms:
            for key, source in entry.sources:
                if own:
                    cite(platforms_file, f"platform {entry.name}.{key}", source)
                else:
                    cited.add(source)
        for gpu_name, (gpu_file, host) in hosts.items():  # the one platform a superchip's host CPU runs
            if host not in platforms:
                add(gpu_file, f"gpu[{gpu_name!r}].host",
                    f"unknown platform {host!r} (one of {', '.join(platforms.names())})")
    for source_id in sorted(set(sources or {}) - cited) if not unread_files else ():
        add(sources_file(db, source_id), f"source {source_id}", "is cited by no fact")
    return problems
