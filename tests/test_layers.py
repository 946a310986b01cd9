"""The database in layers: the bundled one, the user data folder `db sync`
writes, and an overlay of the user's own facts (knowledge/layers.py)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from compat import Database
from compat.cli import cli
from compat.engine.check import check_stack
from compat.errors import DatabaseError, StackError
from compat.formats.text import render
from compat.knowledge import paths
from compat.knowledge.graph import write_graph
from compat.knowledge.layers import OVERLAY_ENV, LayeredDatabase, current_date, overlay_chosen, user_data_dir
from compat.knowledge.binding import load_stack, loads_stack

from .conftest import ROOT
from .index_server import LocalIndex

TODAY = current_date()  # the date snapshot ages are counted to (conftest fixes it)
SYNC_DAY = dt.date.today()  # the date a sync writes: the real one


def ago(days: int) -> str:
    return (TODAY - dt.timedelta(days=days)).isoformat()


@pytest.fixture(scope="module")
def index():
    with LocalIndex() as served:
        yield served


@pytest.fixture(scope="module")
def synced(index, tmp_path_factory) -> Path:
    """A small whole database: alpha and beta as `db sync` snapshots them from
    the local index, one GPU and its source."""
    root = tmp_path_factory.mktemp("synced") / "data"
    (root / "constraints").mkdir(parents=True)
    (root / "metadata").mkdir()
    (root / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["alpha", "beta"]\n')
    (root / "constraints" / "_sources.toml").write_text(
        '[[source]]\nid = "vendor-table"\nproject = "Vendor"\ntitle = "GPU table"\nkind = "vendor-table"\n')
    (root / "gpus.toml").write_text(
        '[[gpu]]\nname = "H100"\nvendor = "nvidia"\narchitecture = "hopper"\nsegment = "datacenter"\n'
        'compute_capability = "9.0"\nsource = "vendor-table"\n')
    result = CliRunner().invoke(cli, ["db", "sync", "--quiet", "--db", str(root), "--index-url", index.url, "--retries", "0"])
    assert result.exit_code == 0, result.output
    return root


def set_taken(snapshot: Path, date: str) -> None:
    """Give a snapshot another date (same length: its line offsets hold)."""
    data = snapshot.read_bytes()
    header, rest = data.split(b"\n", 1)
    old = json.loads(header)["taken"]
    snapshot.write_bytes(header.replace(f'"taken": "{old}"'.encode(), f'"taken": "{date}"'.encode(), 1) + b"\n" + rest)


@pytest.fixture
def bundled(synced, tmp_path, monkeypatch) -> Path:
    """`synced` installed as an installed wheel carries it (compat/_data), with
    snapshots 200 days old; no user data folder, no overlay."""
    root = tmp_path / "site" / "compat" / "_data"
    shutil.copytree(synced, root)
    for name in ("alpha", "beta"):
        set_taken(root / "metadata" / f"{name}.jsonl", ago(200))
    monkeypatch.setattr(paths, "_PACKAGE", str(root.parent))
    monkeypatch.setenv("COMPAT_DATA", str(tmp_path / "user"))
    monkeypatch.delenv(OVERLAY_ENV, raising=False)
    return root


def overlay(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text))
    return folder


ACME_SOURCES = """\
    [[source]]
    id = "acme-policy"
    project = "ACME"
    title = "ACME inference platform policy"
    kind = "documentation"
    date = 2026-11-02
    """


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_sync_writes_the_user_data_folder_and_leaves_a_read_only_bundled_database_untouched(bundled, index, tmp_path):
    before = digests(bundled)
    modes = {p: p.stat().st_mode for p in [bundled, *bundled.rglob("*")]}
    for path in modes:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        result = CliRunner().invoke(cli, ["db", "sync", "--quiet", "--index-url", index.url, "--retries", "0"])
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert result.exit_code == 0, result.output
    user = tmp_path / "user" / "metadata"
    assert f"snapshots in {user}, read over the bundled database" in result.output
    assert digests(bundled) == before
    assert json.loads((user / "alpha.jsonl").read_text().split("\n", 1)[0])["taken"] == SYNC_DAY.isoformat()
    db = Database.load()
    assert isinstance(db, LayeredDatabase) and db.user == str(tmp_path / "user")
    assert db.snapshot_path("alpha") == str(user / "alpha.jsonl")
    assert db.component("alpha").snapshot_taken == SYNC_DAY


def test_the_user_data_folder_follows_the_platform_convention():
    assert user_data_dir({"HOME": "/home/me"}, "linux") == "/home/me/.local/share/compat"
    assert user_data_dir({"LOCALAPPDATA": "/c/Users/me/AppData/Local"}, "win32") == os.path.join(
        "/c/Users/me/AppData/Local", "compat")
    assert user_data_dir({"COMPAT_DATA": "/srv/compat", "XDG_DATA_HOME": "/x"}, "darwin") == "/srv/compat"


@pytest.mark.parametrize("bundled_age, user_age, winner", [(200, 0, "user"), (0, 200, "bundled"), (5, 5, "user")])
def test_the_newer_snapshot_wins_and_the_user_one_on_the_same_day(bundled, tmp_path, bundled_age, user_age, winner):
    user = tmp_path / "user" / "metadata"
    user.mkdir(parents=True)
    shutil.copy(bundled / "metadata" / "alpha.jsonl", user / "alpha.jsonl")
    set_taken(bundled / "metadata" / "alpha.jsonl", ago(bundled_age))
    set_taken(user / "alpha.jsonl", ago(user_age))
    db = Database.load()
    expected = {"user": user, "bundled": bundled / "metadata"}[winner] / "alpha.jsonl"
    assert db.snapshot_path("alpha") == str(expected)
    assert db.component("alpha").snapshot_taken == TODAY - dt.timedelta(days=min(bundled_age, user_age))
    assert db.snapshot_path("beta") == str(bundled / "metadata" / "beta.jsonl")  # the user layer has none


VLLM_STACK = """\
    [system]
    python = "3.12"
    cuda = "13.0"
    driver = "580.95.05"
    glibc = "2.35"

    [hardware]
    gpu = "ACME X1 Accelerator"

    [packages]
    vllm = "0.32.0"
    """

ACME_OVERLAY = {
    "constraints/_sources.toml": ACME_SOURCES,
    "constraints/vllm.toml": """\
        schema = 1

        [component]
        name = "vllm"

        [[rule]]
        id = "acme.vllm.x1-fp8-kv"
        kind = "known-issue"
        severity = "warning"
        releases = ">=0.30"
        when = { gpu = "ACME-X1" }
        message = "the FP8 KV cache loses accuracy on ACME X1 boards: run --kv-cache-dtype auto"
        source = "acme-policy"
        """,
    "gpus.toml": """\
        [[gpu]]
        name = "ACME-X1"
        aliases = ["ACME X1 Accelerator"]
        vendor = "nvidia"
        architecture = "hopper"
        segment = "datacenter"
        compute_capability = "9.0"
        source = "acme-policy"
        """,
}


def test_an_overlay_rule_fires_on_a_gpu_of_the_overlay_marked_local(tmp_path):
    # a second rule cites a source of the bundled database: it is the overlay's fact all the same
    audit = '\n[[rule]]\nid = "acme.vllm.audit"\nkind = "note"\nreleases = ">=0.32"\nmessage = "audited"\n' \
            'source = "vllm-0.32.0"\n'
    folder = overlay(tmp_path / "org", {**ACME_OVERLAY,
                                        "constraints/vllm.toml": ACME_OVERLAY["constraints/vllm.toml"] + audit})
    stack = tmp_path / "deploy" / "stack.toml"
    stack.parent.mkdir()
    stack.write_text(textwrap.dedent(VLLM_STACK) + '\n[compat]\noverlay = "../org"\n')
    db = Database.load(ROOT / "data")
    report = check_stack(load_stack(stack, db), db)
    local = [f for f in report.findings if f.layer == "local"]
    assert [f.id for f in local] == ["acme.vllm.x1-fp8-kv", "acme.vllm.audit"]
    assert local[0].severity == "warning" and local[0].source.title == "ACME inference platform policy"
    assert {f.layer for f in report.findings} - {"local"} <= {"curated", "metadata", "stack"}
    assert ("  - [local] vllm 0.32.0: the FP8 KV cache loses accuracy on ACME X1 boards: run --kv-cache-dtype auto\n"
            "    [acme.vllm.x1-fp8-kv] source: ACME inference platform policy (2026-11-02)") in render(report)
    shown = {f["id"]: f["layer"] for f in report.to_dict()["findings"]}
    assert shown["acme.vllm.x1-fp8-kv"] == "local" and shown["vllm.cors-default-restricted"] == "curated"
    assert str(folder) == report.stack.overlay


def test_db_overlay_and_its_environment_variable_lay_the_overlay_over_the_database(tmp_path):
    folder = overlay(tmp_path / "org", ACME_OVERLAY)
    stack = tmp_path / "stack.toml"
    stack.write_text(textwrap.dedent(VLLM_STACK))
    bare = CliRunner().invoke(cli, ["check", str(stack), "--db", str(ROOT / "data")], env={OVERLAY_ENV: None})
    assert bare.exit_code == 2 and "unknown GPU 'ACME X1 Accelerator'" in bare.output
    for args, env in (([ "--db-overlay", str(folder)], {OVERLAY_ENV: None}), ([], {OVERLAY_ENV: str(folder)})):
        result = CliRunner().invoke(cli, ["check", str(stack), "--db", str(ROOT / "data"), "--format", "json", *args],
                                    env=env)
        assert result.exit_code == 0, result.output
        assert {f["id"]: f["layer"] for f in json.loads(result.output)["findings"]}["acme.vllm.x1-fp8-kv"] == "local"


def test_an_overlay_rule_id_the_bundled_database_uses_is_an_error_naming_both_files(tmp_path):
    folder = overlay(tmp_path / "org", {**ACME_OVERLAY, "constraints/vllm.toml": ACME_OVERLAY["constraints/vllm.toml"]
                                        .replace("acme.vllm.x1-fp8-kv", "vllm.cors-default-restricted")})
    with overlay_chosen(str(folder)):
        db = Database.load(ROOT / "data")
    with pytest.raises(DatabaseError) as caught:
        db.component("vllm")
    assert caught.value.file == str(folder / "constraints" / "vllm.toml")
    assert str(ROOT / "data" / "constraints" / "vllm.toml") in caught.value.message
    result = CliRunner().invoke(cli, ["db", "show", "vllm", "--db", str(ROOT / "data"), "--db-overlay", str(folder)])
    assert result.exit_code == 2
    assert result.output == (f"compat: error: {folder}/constraints/vllm.toml: rule vllm.cors-default-restricted: "
                             f"rule ID 'vllm.cors-default-restricted' is also in {ROOT}/data/constraints/vllm.toml: a "
                             "fact has one home (an overlay adds facts; it does not restate the database's)\n")


def test_lint_names_the_layer_of_each_problem(bundled, tmp_path):
    assert CliRunner().invoke(cli, ["db", "lint"]).exit_code == 0
    folder = overlay(tmp_path / "org", {
        "constraints/_sources.toml": ACME_SOURCES,
        "constraints/alpha.toml": """\
            schema = 1

            [component]
            name = "alpha"

            [[rule]]
            id = "acme.alpha.note"
            kind = "note"
            message = "ACME pins alpha"
            source = "acme-polcy"
            """,
        "cuda.toml": "",
    })
    result = CliRunner().invoke(cli, ["db", "lint", "--db-overlay", str(folder), "--format", "json"])
    assert result.exit_code == 1
    problems = [(p["file"], p["key"], p["message"], p["layer"]) for p in json.loads(result.stdout)]
    assert problems == [
        (str(folder / "constraints" / "alpha.toml"), "rule acme.alpha.note.source",
         "cites unknown source 'acme-polcy'", "overlay"),
        (str(folder / "cuda.toml"), None,
         "is not read from an overlay (it holds constraints/, metadata/, options/, gpus.toml, models.toml)", "overlay"),
        (str(folder / "constraints" / "_sources.toml"), "source acme-policy", "is cited by no fact", "overlay"),
    ]
    text = CliRunner().invoke(cli, ["db", "lint", "--db-overlay", str(folder)]).stdout
    assert text.splitlines()[0] == (f"{folder}/constraints/alpha.toml: rule acme.alpha.note.source: "
                                    "cites unknown source 'acme-polcy' [overlay]")


STALE_STACK = '[system]\npython = "3.12"\n\n[packages]\nalpha = "2.0"\nbeta = "0.9"\n'


@pytest.mark.parametrize("alpha_age, beta_age, noted", [(100, 90, 90), (100, 10, None), (40, 31, 31), (40, 30, None)])
def test_a_stale_snapshot_is_noted_once_from_the_newest_in_use(synced, tmp_path, alpha_age, beta_age, noted):
    root = tmp_path / "data"
    shutil.copytree(synced, root)
    set_taken(root / "metadata" / "alpha.jsonl", ago(alpha_age))
    set_taken(root / "metadata" / "beta.jsonl", ago(beta_age))
    db = Database.load(root)
    report = check_stack(loads_stack(STALE_STACK, db), db)
    stale = [f for f in report.findings if f.id.startswith("snapshot")]
    if noted is None:
        assert stale == []
        return
    assert [(f.id, f.severity, f.layer, f.details) for f in stale] == [
        ("snapshot:stale", "info", "metadata", {"taken": ago(noted), "age_days": noted})]
    assert f"was taken {ago(noted)}, {noted} days ago (more than 30)" in stale[0].message
    assert render(report).count("compat db sync") == 1


def test_db_path_shows_each_layer_and_the_age_of_its_snapshots(bundled, tmp_path):
    user = tmp_path / "user" / "metadata"
    user.mkdir(parents=True)
    shutil.copy(bundled / "metadata" / "alpha.jsonl", user / "alpha.jsonl")
    set_taken(user / "alpha.jsonl", ago(3))
    write_graph(str(user))
    folder = overlay(tmp_path / "org", ACME_OVERLAY)
    result = CliRunner().invoke(cli, ["db", "path", "--db-overlay", str(folder)])
    assert result.exit_code == 0, result.output
    assert result.output == textwrap.dedent(f"""\
        bundled  {bundled}
                 2 snapshots, 1 in use; oldest alpha {ago(200)} (200 days ago), newest beta {ago(200)} (200 days ago)
        user     {tmp_path / 'user'}
                 1 snapshot, 1 in use; oldest alpha {ago(3)} (3 days ago), newest alpha {ago(3)} (3 days ago)
        overlay  {folder}
                 no snapshots
        newest snapshot in use: alpha {ago(3)} (3 days ago); a check notes it once it is older than 30 days
        """)
    data = json.loads(CliRunner().invoke(cli, ["db", "path", "--format", "json"]).output)
    assert [(layer["layer"], layer["read"]) for layer in data["layers"]] == [
        ("bundled", True), ("user", True), ("overlay", False)]
    assert data["layers"][0]["snapshots"][0] == {"name": "alpha", "taken": ago(200), "age_days": 200, "in_use": False}
    assert data["layers"][1]["snapshots"] == [{"name": "alpha", "taken": ago(3), "age_days": 3, "in_use": True}]


def test_the_shared_database_is_keyed_on_every_layer(bundled, tmp_path, monkeypatch):
    plain = Database.shared()
    assert type(plain) is Database and Database.shared() is plain
    user = tmp_path / "user" / "metadata"
    user.mkdir(parents=True)
    shutil.copy(bundled / "metadata" / "alpha.jsonl", user / "alpha.jsonl")
    write_graph(str(user))
    synced = Database.shared()
    assert isinstance(synced, LayeredDatabase) and synced.overlay is None and Database.shared() is synced
    monkeypatch.setenv(OVERLAY_ENV, str(overlay(tmp_path / "org", {"constraints/_sources.toml": ACME_SOURCES})))
    overlaid = Database.shared()
    assert overlaid is not synced and overlaid.overlay == str(tmp_path / "org") and Database.shared() is overlaid
    (tmp_path / "org" / "constraints" / "alpha.toml").write_text('[component]\nname = "alpha"\n')
    assert Database.shared() is not overlaid  # an overlay file added


def test_a_stack_overlay_that_is_no_folder_is_an_error_naming_the_key(tmp_path):
    with pytest.raises(StackError) as caught:
        loads_stack('[system]\npython = "3.12"\n[compat]\noverlay = "no/such/folder"\n', Database.load(ROOT / "data"))
    assert caught.value.key == "[compat] overlay" and "no such folder" in caught.value.message


@pytest.mark.parametrize(("catalog", "looked_up"), [("gpus.toml", '[hardware]\ngpu = "ACME-X1"\n'),
                                                    ("models.toml", '[model]\nname = "acme-model"\n')])
@pytest.mark.parametrize("kind", ["device", "pipe"])
def test_an_overlay_catalog_that_is_no_regular_file_is_one_line_exit_2(tmp_path, catalog, looked_up, kind):
    """A catalog read by its line scan is read like every database file: a
    link to /dev/zero would be read forever, a pipe would wait forever."""
    (tmp_path / "org").mkdir()
    if kind == "device":
        (tmp_path / "org" / catalog).symlink_to("/dev/zero")
    else:
        os.mkfifo(tmp_path / "org" / catalog)
    stack = tmp_path / "stack.toml"
    stack.write_text(f'[system]\npython = "3.12"\ncuda = "13.0"\n{looked_up}[packages]\nvllm = "0.32.0"\n'
                     '[compat]\noverlay = "org"\n')
    result = CliRunner().invoke(cli, ["check", str(stack)])
    assert result.exit_code == 2, result.output
    assert "not a regular file" in result.output and catalog in result.output
