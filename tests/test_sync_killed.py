"""A sync killed at any point leaves nothing the next one does not clean up.

`compat db sync` stages its files in a ``.sync-*`` folder of the metadata
folder and renames them into place together (compat._files.Staging). A
process killed there removes nothing; the next Staging of the folder puts
back what a half-done commit replaced and removes the folder. And what a
sync writes in two files, a release's tags and its wheel records, agrees,
or `db lint` says where not."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from compat._files import Staging


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_staging_folder_of_a_killed_sync_is_removed_by_the_next(tmp_path):
    (tmp_path / "alpha.jsonl").write_text("old\n")
    left = tmp_path / ".sync-left"
    (left / "new").mkdir(parents=True)
    (left / "new" / "alpha.jsonl").write_text("half\n")
    (left / "pid").write_text(str(_dead_pid()))
    with Staging(str(tmp_path)) as staging:
        assert not left.exists()
        staging.write("alpha.jsonl", "new\n")
        staging.commit()
    assert (tmp_path / "alpha.jsonl").read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["alpha.jsonl"]


def test_a_commit_killed_half_way_is_put_back_whole(tmp_path):
    # the killed sync had replaced alpha and added gamma, not yet beta: the next puts alpha back,
    # removes gamma and leaves beta as it was, so the folder is the one before that sync
    (tmp_path / "alpha.jsonl").write_text("alpha 1\n")
    (tmp_path / "beta.jsonl").write_text("beta 1\n")
    left = tmp_path / ".sync-left"
    (left / "old").mkdir(parents=True)
    (left / "old" / "alpha.jsonl").write_text("alpha 1\n")
    (left / "old" / "beta.jsonl").write_text("beta 1\n")
    (left / "pid").write_text(str(_dead_pid()))
    (left / "commit.json").write_text(json.dumps({"alpha.jsonl": True, "beta.jsonl": True, "gamma.jsonl": False}))
    (tmp_path / "alpha.jsonl").write_text("alpha 2\n")
    (tmp_path / "gamma.jsonl").write_text("gamma 2\n")
    assert Staging.clean_leftovers(str(tmp_path)) == [".sync-left"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alpha.jsonl", "beta.jsonl"]
    assert (tmp_path / "alpha.jsonl").read_text() == "alpha 1\n" and (tmp_path / "beta.jsonl").read_text() == "beta 1\n"


def test_the_staging_folder_of_a_running_sync_is_left_alone(tmp_path):
    running = tmp_path / ".sync-running"
    (running / "new").mkdir(parents=True)
    (running / "pid").write_text(str(os.getpid()))
    just_made = tmp_path / ".sync-new"  # no pid yet: a sync that has only just made it
    just_made.mkdir()
    assert Staging.clean_leftovers(str(tmp_path)) == []
    assert running.exists() and just_made.exists()


def test_a_sync_killed_by_sigkill_leaves_a_folder_the_next_cleans(tmp_path):
    (tmp_path / "alpha.jsonl").write_text("old\n")
    script = textwrap.dedent(f"""
        import os, signal
        from compat._files import Staging
        staging = Staging({str(tmp_path)!r})
        staging.write("alpha.jsonl", "half\\n")
        os.kill(os.getpid(), signal.SIGKILL)
        """)
    killed = subprocess.run([sys.executable, "-c", script], timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert any(p.name.startswith(".sync-") for p in tmp_path.iterdir())
    with Staging(str(tmp_path)):
        pass
    assert [p.name for p in tmp_path.iterdir()] == ["alpha.jsonl"]
    assert (tmp_path / "alpha.jsonl").read_text() == "old\n"


def test_lint_flags_wheel_records_that_do_not_match_their_release(tmp_path):
    import shutil

    from compat.knowledge.snapshot import snapshot_problems

    root = Path(__file__).resolve().parent.parent / "data" / "metadata"
    for name in ("six.jsonl", "six.wheels.jsonl"):
        shutil.copy(root / name, tmp_path / name)
    assert snapshot_problems(str(tmp_path / "six.jsonl")) == []
    wheels = tmp_path / "six.wheels.jsonl"
    wheels.write_text(wheels.read_text().replace("six-1.17.0-py2.py3-none-any.whl", "six-1.17.0-py3-none-any.whl"))
    [problem] = snapshot_problems(str(tmp_path / "six.jsonl"))
    assert problem.key == "tags" and "1.17.0" in problem.message and problem.line is not None
