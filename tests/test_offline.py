"""Only `db sync` speaks to the network: `check`, `resolve`, `why`, `db show`
and `db lint` run whole with every socket refused (docs/reliability.md, "No
network outside db sync")."""

from __future__ import annotations

import json
import shutil
import socket

import pytest
from click.testing import CliRunner

from compat.cli import cli
from compat.errors import PackageIndexError
from compat.knowledge.index import IndexClient

from .conftest import EXAMPLES, ROOT, copy_database


class Blocked(OSError):
    """What any use of the network raises in these tests."""


@pytest.fixture
def no_network(monkeypatch):
    """Refuse every socket: creating one, resolving a name, connecting one
    made before. Returns the list of attempts."""
    attempts: list[str] = []
    real = socket.socket

    def refuse(what: str):
        def blocked(*args, **kwargs):
            attempts.append(what)
            raise Blocked(f"the network is blocked in this test ({what})")

        return blocked

    class BlockedSocket(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs) -> None:
            refuse("socket.socket")()

    monkeypatch.setattr(socket, "socket", BlockedSocket)
    for name in ("create_connection", "create_server", "getaddrinfo", "gethostbyname", "socketpair", "fromfd"):
        monkeypatch.setattr(socket, name, refuse(f"socket.{name}"))
    for name in ("connect", "connect_ex", "sendto", "bind"):
        monkeypatch.setattr(real, name, refuse(f"socket.{name}"))
    return attempts


def test_the_guard_refuses_the_network(no_network):
    """The guard works: the one command that reads an index cannot reach one."""
    with pytest.raises(Blocked):
        socket.socket()
    client = IndexClient("http://127.0.0.1:9/simple/", retries=0, use_netrc=False)
    with pytest.raises(PackageIndexError, match="blocked"):
        client.page("vllm")
    assert {"socket.create_connection", "socket.getaddrinfo", "socket.socket"} & set(no_network), no_network


STACK = str(EXAMPLES / "h200-vllm.toml")
BROKEN = str(EXAMPLES / "transformers-too-new.toml")
COMMANDS = {
    "check": (["check", STACK, "--format", "json"], 0),
    "check, a conflict": (["check", BROKEN], 1),
    "resolve": (["resolve", STACK], 0),
    "db show": (["db", "show", "vllm==0.32.0", "--format", "json"], 0),
    "db show gpus": (["db", "show", "gpus"], 0),
}


def run(args: list[str], expected: int, attempts: list[str]) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == expected, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not attempts
    return result.output


@pytest.mark.parametrize("case", list(COMMANDS))
def test_commands_run_without_the_network(no_network, case):
    run(*COMMANDS[case], no_network)


def test_resolve_to_a_lock_runs_without_the_network(no_network, tmp_path):
    """A lock file's URLs and hashes come from the snapshots, never from the index."""
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.12"\n[packages]\ntransformers = "5.19.0"\n')
    output = run(["resolve", str(stack), "--format", "pylock"], 0, no_network)
    assert output.count("[[packages]]") > 10 and "sha256 = " in output


def test_why_runs_without_the_network(no_network, tmp_path):
    """On the curated files and the stack's snapshots: `why` reads every
    snapshot of the database it is given, which the bundled one makes slow."""
    root = tmp_path / "data"
    shutil.copytree(ROOT / "data", root, ignore=shutil.ignore_patterns("metadata"))
    (root / "metadata").mkdir()
    for name in ("vllm", "transformers", "torch"):
        shutil.copy(ROOT / "data" / "metadata" / f"{name}.jsonl", root / "metadata")
    output = run(["why", "transformers", "--stack", STACK, "--db", str(root)], 0, no_network)
    assert output.startswith("Constraints on transformers in ") and "vllm 0.32.0" in output


def test_db_lint_runs_without_the_network(no_network, tmp_path):
    database = copy_database(tmp_path / "data")
    assert run(["db", "lint", "--db", str(database)], 0, no_network).startswith("ok: ")


# -- db show of a release the database does not hold ------------------------------------


@pytest.mark.parametrize(
    ("spec", "suggestion"),
    [("vllm==0.31.5", "did you mean 0.31.0 or 0.32.0?"), ("vllm==0.0.1", "did you mean 0.2.7?"),
     ("ltx-2==1.0", "did you mean 1.5.0?")],
)
def test_db_show_of_a_release_not_held_is_bad_input_with_the_nearest(no_network, spec, suggestion):
    """Input compat cannot use (exit 2, one line), not a conflict (exit 1)."""
    for fmt in ("text", "json"):
        result = CliRunner().invoke(cli, ["db", "show", spec, "--format", fmt])
        name, version = spec.split("==")
        assert result.exit_code == 2, result.output
        assert result.output == f"compat: error: {name} {version} is not in the database; {suggestion}\n"


def test_db_show_of_a_release_held_under_another_spelling_is_shown(no_network):
    result = CliRunner().invoke(cli, ["db", "show", "vllm==0.32", "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.output)["release"] is not None
