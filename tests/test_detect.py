"""`compat detect`: a stack.toml for the machine, from the interpreter, the
GPU tools and torch, each faked here: scripts on PATH print what nvidia-smi
and rocm-smi print (tests/data/smi/), and a fresh virtual environment holds
stub distributions (and a stub torch) in place of the real ones."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import time
import venv
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from compat import load_stack
from compat._toml import loads
from compat.cli import cli
from compat.formats.detected import render
from compat.sources.detect import GpuReading, Machine, detect, detect_gpus, parse_nvidia_smi, parse_rocm_smi, run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the fake tools are shell scripts")

SMI = Path(__file__).parent / "data" / "smi"
CAT, SLEEP = shutil.which("cat"), shutil.which("sleep")


@pytest.fixture
def tools(tmp_path, monkeypatch):
    """A PATH that holds only the fake GPU tools a test installs."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))

    def install(name: str, script: str) -> None:
        path = folder / name
        path.write_text("#!/bin/sh\n" + textwrap.dedent(script), encoding="utf-8")
        path.chmod(0o755)

    def prints(name: str, recorded: str, code: int = 0) -> None:
        install(name, f"{CAT} '{SMI / recorded}'\nexit {code}\n")

    install.prints = prints  # type: ignore[attr-defined]
    return install


@pytest.fixture(scope="module")
def environment(tmp_path_factory):
    """Make a virtual environment (no pip: a tenth of a second) holding the
    distributions given, and return its interpreter."""

    def make(distributions: dict[str, str] = {}, torch: str | None = None) -> str:
        root = tmp_path_factory.mktemp("env")
        venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
        site = root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
        for name, version in distributions.items():
            info = site / f"{name.replace('-', '_')}-{version}.dist-info"
            info.mkdir()
            (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nA stub.\n")
        if torch is not None:
            (site / "torch").mkdir()
            (site / "torch" / "__init__.py").write_text(textwrap.dedent(torch))
        return str(root / "bin" / "python")

    return make


CUDA_TORCH = """
    __version__ = "2.10.0+cu128"
    class version:
        cuda = "12.8"
        hip = None
"""
ROCM_TORCH = """
    __version__ = "2.10.0+rocm6.4"
    class version:
        cuda = None
        hip = "6.4.43482-0f2d60242"
"""


@pytest.fixture(scope="module")
def gpu_env(environment):
    return environment({"torch": "2.10.0+cu128", "vllm": "0.32.0", "numpy": "2.3.1"}, torch=CUDA_TORCH)


@pytest.fixture(scope="module")
def bare_env(environment):
    return environment()


def stack_of(text: str, db):
    """The stack a detected file describes, loaded as `compat check` loads it."""
    return load_stack(loads(text, file="<detected>"), db)


def on_gpus(timeout: float = 30) -> Machine:
    """A machine whose GPUs the tools on PATH give (the interpreter is not asked: other tests do that)."""
    gpus, tool, notes = detect_gpus(timeout)
    return Machine(python="3.12.7", platform="linux-x86_64", glibc="2.35", gpus=gpus, gpu_tool=tool, notes=notes)


def test_one_gpu_gives_its_catalog_name_driver_cuda_and_the_labelled_builds(tools, gpu_env, db):
    tools.prints("nvidia-smi", "nvidia-one-h100.csv")
    text = render(detect(gpu_env, timeout=30, platforms=db.platforms), db)
    stack = stack_of(text, db)
    assert stack.hardware.gpu.name == "H100" and stack.hardware.count == 1
    assert stack.system.driver == Version("580.95.05") and stack.system.cuda == Version("12.8")
    assert stack.system.python == Version(".".join(map(str, sys.version_info[:3])))
    assert stack.packages["torch"].build == "cu128" and str(stack.packages["vllm"].pinned) == "0.32.0"
    assert "numpy" not in stack.packages  # a dependency, not a tracked package
    assert 'gpu = "H100"  # nvidia-smi: NVIDIA H100 80GB HBM3, compute capability 9.0' in text


def test_eight_gpus_are_counted(tools, db):
    tools.prints("nvidia-smi", "nvidia-eight-h200.csv")
    stack = stack_of(render(on_gpus(), db), db)
    assert (stack.hardware.gpu.name, stack.hardware.count) == ("H200", 8)


def test_mixed_gpus_name_the_lowest_compute_capability_and_count_all(tools, db):
    tools.prints("nvidia-smi", "nvidia-mixed-h100-a100.csv")
    text = render(on_gpus(), db)
    stack = stack_of(text, db)
    assert (stack.hardware.gpu.name, stack.hardware.count) == ("A100 80GB", 8)
    assert "4 x NVIDIA A100-SXM4-80GB, 4 x NVIDIA H100 80GB HBM3" in text


def test_amd_gpus_from_rocm_smi_and_the_rocm_torch_was_built_with(tools, environment, db):
    tools.prints("rocm-smi", "rocm-two-mi300x.json")
    python = environment({"torch": "2.10.0+rocm6.4"}, torch=ROCM_TORCH)
    text = render(detect(python, timeout=30, platforms=db.platforms), db)
    stack = stack_of(text, db)
    assert (stack.hardware.gpu.name, stack.hardware.count, stack.hardware.accelerator) == ("MI300X", 2, "rocm")
    assert stack.system.rocm == Version("6.4") and stack.system.cuda is None and stack.system.driver is None
    assert "nvidia-smi" not in text  # the other vendor's missing tool is no news


@pytest.mark.parametrize("script, problem", [
    (f"{CAT} '{SMI / 'nvidia-no-driver.txt'}'\nexit 9\n",
     "nvidia-smi failed (exit 9): NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."),
    ("echo '<html>not a GPU</html>'\n", "nvidia-smi printed what compat cannot read (line 1 is not"),
    ("echo 'NVIDIA H100, nine, 580.95.05'\n", "'nine' is not a compute capability"),
    (f"exec {SLEEP} 30\n", "nvidia-smi did not answer within 0.5 s (stopped)"),
], ids=["no-driver", "garbage", "bad-field", "timeout"])
def test_a_failing_nvidia_smi_is_a_note_and_the_stack_still_loads(tools, db, script, problem):
    tools("nvidia-smi", script)
    started = time.monotonic()
    machine = on_gpus(timeout=0.5)
    assert time.monotonic() - started < 4
    text = render(machine, db)
    assert any(problem in note for note in machine.notes), machine.notes
    stack = stack_of(text, db)
    assert stack.hardware.gpu is None and stack.hardware.accelerator == "cpu"


def test_no_gpu_tool_and_no_torch_give_a_cpu_stack_that_says_why(tools, bare_env, db):
    text = render(detect(bare_env, timeout=30, platforms=db.platforms), db)
    for note in ("nvidia-smi is not on PATH: no NVIDIA GPU detected", "rocm-smi is not on PATH: no AMD GPU detected",
                 "torch is not installed", "none of the packages the database tracks is installed"):
        assert f"# note: {note}" in text
    stack = stack_of(text, db)
    assert stack.hardware.accelerator == "cpu" and stack.system.cuda is None and not stack.packages


def test_torch_that_fails_to_import_leaves_cuda_out_with_a_note(tools, environment, db):
    python = environment({"torch": "2.10.0"}, torch="raise ImportError('libcuda.so.1: cannot open shared object file')")
    machine = detect(python, timeout=30, platforms=db.platforms)
    assert machine.torch is None
    assert any("could not be imported (ImportError: libcuda.so.1" in note for note in machine.notes)
    assert stack_of(render(machine, db), db).system.cuda is None


def test_a_driver_without_compute_cap_is_asked_again_and_the_catalog_gives_it(tools, db):
    tools("nvidia-smi", """
        case "$1" in *compute_cap*) echo 'Field "compute_cap" is not a valid field to query.'; exit 2;; esac
        echo 'Tesla T4, 470.82.01'
    """)
    stack = stack_of(render(on_gpus(), db), db)
    assert stack.hardware.gpu.name == "T4" and stack.hardware.compute_capability == Version("7.5")
    assert stack.system.driver == Version("470.82.01")


@pytest.mark.parametrize("line, note", [
    ("NVIDIA Future GPU X1, 11.0, 590.1", "the GPU catalog does not know NVIDIA Future GPU X1"),
    ("NVIDIA RTX 6000, 7.5, 590.1", "the GPU catalog cannot tell which GPU NVIDIA RTX 6000 is"),
    ("NVIDIA H100 80GB HBM3, 8.0, 590.1", "but the catalog's H100 has 9.0: the compute capability is written"),
], ids=["unknown", "ambiguous", "disagrees"])
def test_a_gpu_the_catalog_cannot_name_is_written_as_its_compute_capability(tools, db, line, note):
    tools("nvidia-smi", f"echo '{line}'\n")
    text = render(on_gpus(), db)
    stack = stack_of(text, db)
    assert stack.hardware.gpu is None and stack.hardware.compute_capability == Version(line.split(", ")[1])
    assert note in text


def test_a_hung_program_is_stopped_with_the_processes_it_started():
    script = f"{SLEEP} 30 & {SLEEP} 30\n"  # the child keeps the pipes open after its parent is killed
    started = time.monotonic()
    tool = run(["/bin/sh", "-c", script], timeout=0.3)
    assert time.monotonic() - started < 3 and tool.problem == "sh did not answer within 0.3 s (stopped)"


def test_nvidia_smi_output_reads_not_available_fields_as_unknown():
    (gpu,) = parse_nvidia_smi("NVIDIA A10, [N/A], [N/A]\n")
    assert gpu == GpuReading("nvidia", "NVIDIA A10", None, None)


def test_rocm_smi_output_may_follow_warnings_and_use_either_capitalization():
    text = 'WARNING: one card is in a low-power state\n{"card1": {"Card Series": "AMD Instinct MI250X", ' \
           '"GFX Version": "gfx90a"}, "card0": {"Card series": "AMD Instinct MI210"}, "system": {}}'
    assert [(g.name, g.gfx_target) for g in parse_rocm_smi(text)] == [("AMD Instinct MI210", None),
                                                                       ("AMD Instinct MI250X", "gfx90a")]
    with pytest.raises(ValueError, match="no GPU list"):
        parse_rocm_smi("ERROR:root:Driver not initialized (amdgpu not found in modules)\n")


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=200))
def test_any_nvidia_smi_output_is_read_or_refused_never_a_crash(text):
    try:
        gpus = parse_nvidia_smi(text)
    except ValueError:
        return
    assert all(g.name.isprintable() and g.name for g in gpus)


names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
readings = st.builds(GpuReading, st.just("nvidia"), names,
                     st.one_of(st.none(), st.sampled_from([Version("7.5"), Version("8.0"), Version("9.0"),
                                                           Version("12.0")])),
                     st.one_of(st.none(), st.just("580.95.05")))


@settings(max_examples=25, deadline=None)
@given(st.lists(readings, max_size=4), st.sampled_from([None, {"version": "2.10.0", "cuda": "12.8", "hip": None},
                                                        {"version": "2.10.0", "cuda": None, "hip": None}]))
def test_whatever_the_tools_print_the_stack_written_loads(db, gpus, torch):
    machine = Machine(python="3.12.7", platform="linux-x86_64", glibc="2.35", gpus=gpus,
                      gpu_tool="nvidia-smi" if gpus else None, torch=torch, notes=["a\nnote\x00"])
    stack = stack_of(render(machine, db), db)
    assert stack.hardware.count == max(1, len(gpus))


def test_cli_writes_the_file_whole_and_prints_the_notes_on_stderr(tools, gpu_env, tmp_path, db):
    tools.prints("nvidia-smi", "nvidia-one-h100.csv")
    target = tmp_path / "stack.toml"
    target.write_text("old")
    result = CliRunner().invoke(cli, ["detect", "-o", str(target), "--python", gpu_env])
    assert result.exit_code == 0, result.output
    assert "compat: note: " not in result.stdout and f"wrote {target}" in result.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".stack.toml")] == []  # no temporary left
    assert load_stack(str(target), db).hardware.gpu.name == "H100"  # as `compat check` reads it


def test_cli_leaves_no_file_when_the_interpreter_cannot_be_asked(tools, tmp_path):
    target = tmp_path / "stack.toml"
    result = CliRunner().invoke(cli, ["detect", "-o", str(target), "--python", str(tmp_path / "missing-python")])
    assert result.exit_code == 2
    assert "missing-python: --python: no such interpreter" in result.stderr
    assert not target.exists()


def test_cli_prints_the_stack_and_notes_by_default(tools, bare_env):
    result = CliRunner().invoke(cli, ["detect", "--python", bare_env])
    assert result.exit_code == 0
    assert result.stdout.startswith("# This machine's stack") and "[system]" in result.stdout
    assert "compat: note: nvidia-smi is not on PATH: no NVIDIA GPU detected" in result.stderr


def test_the_command_line_default_timeout_is_the_detectors():
    from compat.cli import detect as command
    from compat.sources import detect as source

    assert command.DEFAULT_TIMEOUT == source.DEFAULT_TIMEOUT
