"""The stack file, as the v1 contract specifies it."""

from __future__ import annotations

import re

import pytest
from packaging.version import Version

from compat import StackError, load_stack

from .conftest import base


def error_of(data, db) -> StackError:
    with pytest.raises(StackError) as info:
        load_stack(data, db)
    return info.value


def test_minimal_stack_needs_only_python(db):
    stack = load_stack({"system": {"python": "3.12"}}, db)
    assert stack.system.python == Version("3.12")
    assert stack.system.platform == "linux-x86_64"
    assert stack.hardware.accelerator == "cpu"
    assert stack.packages == {}


def test_full_python_version_is_accepted(db):
    assert load_stack({"system": {"python": "3.12.7"}}, db).system.python == Version("3.12.7")


def test_missing_system_table_is_an_error(db):
    assert "[system]" in str(error_of({"packages": {}}, db))


def test_missing_python_is_an_error(db):
    err = error_of({"system": {"cuda": "13.0"}}, db)
    assert "python" in str(err.key)


def test_python_as_toml_number_says_to_quote_it(write_stack, db):
    path = write_stack(
        """
        [system]
        python = 3.10
        """
    )
    err = error_of(path, db)
    assert err.file == str(path)
    assert err.line == 3
    assert "quote it" in err.message
    assert "3.1" in err.message


def test_bad_toml_gives_line_and_column(write_stack, db):
    path = write_stack('[system]\npython = "3.12\n')
    err = error_of(path, db)
    assert err.line == 2 and err.column is not None
    assert "invalid TOML" in err.message


def test_missing_file_names_it(tmp_path, db):
    err = error_of(tmp_path / "nope.toml", db)
    assert "nope.toml" in str(err)


@pytest.mark.parametrize(
    ("data", "suggestion"),
    [
        ({"system": {"python": "3.12", "pyhton": "3.12"}}, "python"),
        ({"system": {"python": "3.12"}, "hardwre": {}}, "hardware"),
        ({"system": {"python": "3.12"}, "hardware": {"gpus": "H100"}}, "gpu"),
        ({"system": {"python": "3.12"}, "compat": {"ignored": []}}, "ignore"),
        ({"system": {"python": "3.12"}, "model": {"head_dims": 128}}, "head_dim"),
    ],
)
def test_unknown_keys_suggest_the_nearest(data, suggestion, db):
    assert f"did you mean {suggestion!r}" in str(error_of(data, db))


@pytest.mark.parametrize("schema", [2, 0, "1"])
def test_other_schema_versions_are_refused(schema, db):
    err = error_of({"stack": {"schema": schema}, "system": {"python": "3.12"}}, db)
    assert "schema" in str(err)


def test_schema_one_is_accepted(db):
    assert load_stack({"stack": {"schema": 1, "name": "x"}, "system": {"python": "3.12"}}, db).name == "x"


def test_unknown_platform_is_an_error(db):
    assert "linux-x86_64" in str(error_of({"system": {"python": "3.12", "platform": "linux"}}, db))


@pytest.mark.parametrize(
    ("platform", "machine", "sys_platform"),
    [
        ("linux-x86_64", "x86_64", "linux"),
        ("linux-aarch64", "aarch64", "linux"),
        ("macos-arm64", "arm64", "darwin"),
        ("windows-x86_64", "AMD64", "win32"),
    ],
)
def test_platform_sets_the_marker_environment(platform, machine, sys_platform, db):
    env = load_stack({"system": {"python": "3.11.4", "platform": platform}}, db).system.marker_environment()
    assert env["platform_machine"] == machine
    assert env["sys_platform"] == sys_platform
    assert env["python_version"] == "3.11"
    assert env["python_full_version"] == "3.11.4"


@pytest.mark.parametrize("name", ["H200", "NVIDIA H200", "nvidia h200", "h-200", " H200 "])
def test_gpu_names_ignore_case_spacing_and_vendor(name, db):
    stack = load_stack(base(hardware={"gpu": name}), db)
    assert stack.hardware.gpu.name == "H200"
    assert stack.hardware.compute_capability == Version("9.0")
    assert stack.hardware.accelerator == "cuda"


@pytest.mark.parametrize(("name", "expected"), [("rtx 5090", "RTX 5090"), ("A100 80GB", "A100 80GB"), ("GeForce RTX 4090", "RTX 4090")])
def test_gpu_aliases(name, expected, db):
    assert load_stack(base(hardware={"gpu": name}), db).hardware.gpu.name == expected


def test_unknown_gpu_suggests_the_nearest(db):
    err = error_of(base(hardware={"gpu": "H201"}), db)
    assert "unknown GPU" in err.message and "did you mean" in err.message
    assert "gpu" in str(err.key)


@pytest.mark.parametrize(("written", "expected"), [("9.0", "9.0"), ("sm_90", "9.0"), ("sm90", "9.0"), ("sm_120", "12.0"), ("sm_103", "10.3")])
def test_compute_capability_spellings(written, expected, db):
    stack = load_stack(base(hardware={"compute_capability": written}), db)
    assert stack.hardware.compute_capability == Version(expected)
    assert stack.hardware.accelerator == "cuda"


def test_gpu_and_compute_capability_that_disagree_are_an_error(db):
    err = error_of(base(hardware={"gpu": "A100", "compute_capability": "9.0"}), db)
    assert "disagrees" in err.message


def test_compute_capability_as_number_says_to_quote_it(db):
    assert "quote it" in str(error_of(base(hardware={"compute_capability": 9.0}), db))


@pytest.mark.parametrize("count", [0, -1, "2", True])
def test_bad_gpu_count(count, db):
    assert "count" in str(error_of(base(hardware={"gpu": "H100", "count": count}), db))


def test_accelerator_is_derived_from_the_gpu(db):
    assert load_stack({"system": {"python": "3.12"}, "hardware": {"gpu": "MI300X"}}, db).hardware.accelerator == "rocm"
    assert load_stack({"system": {"python": "3.12", "platform": "macos-arm64"}, "hardware": {"gpu": "Apple M3"}}, db).hardware.accelerator == "mps"


def test_accelerator_that_contradicts_the_gpu_is_an_error(db):
    assert "not rocm" in str(error_of(base(hardware={"gpu": "H100", "accelerator": "rocm"}), db))


def test_no_hardware_and_no_cuda_is_cpu_only(db):
    assert load_stack({"system": {"python": "3.12"}}, db).hardware.accelerator == "cpu"


@pytest.mark.parametrize("written", ["FlashInfer_Python", "flashinfer.python", "Flash_Infer.Python"])
def test_package_names_are_normalized(written, db):
    stack = load_stack(base(packages={written: "0.7.2", "VLLM": "0.32.0"}), db)
    assert set(stack.packages) == {"flashinfer-python", "vllm"}


def test_a_bare_version_is_a_pin_and_a_specifier_is_a_range(db):
    stack = load_stack(base(packages={"vllm": "0.32.0", "transformers": ">=5.16,<5.21"}), db)
    assert stack.packages["vllm"].pinned == Version("0.32.0")
    assert stack.packages["transformers"].pinned is None
    assert stack.packages["transformers"].specifier.contains("5.19.0")


def test_package_table_with_extras(db):
    stack = load_stack(base(packages={"flashinfer-python": {"version": "0.7.2", "extras": ["cu13"]}}), db)
    assert stack.packages["flashinfer-python"].extras == frozenset({"cu13"})


def test_typo_of_a_known_package_is_an_error(db):
    err = error_of(base(packages={"vllmm": "0.32.0"}), db)
    assert "did you mean 'vllm'" in err.message


def test_unknown_package_far_from_known_names_is_untracked(db):
    stack = load_stack(base(packages={"boto3": "1.40.0"}), db)
    assert stack.untracked == ("boto3",)


def test_external_package_is_neither_error_nor_untracked(db):
    stack = load_stack(base(packages={"vllmm": {"version": "1.0", "external": True}}), db)
    assert stack.untracked == ()
    assert stack.packages["vllmm"].external


def test_version_as_number_says_to_quote_it(db):
    assert "quote it" in str(error_of(base(packages={"torch": 2.13}), db))


def test_invalid_specifier_is_an_error(db):
    assert "neither a version" in str(error_of(base(packages={"torch": "latest"}), db))


def test_same_package_twice_after_normalization(db):
    assert "second time" in str(error_of(base(packages={"vllm": "0.32.0", "VLLM": "0.31.0"}), db))


def test_options_must_name_a_listed_package(db):
    err = error_of(base(packages={"vllm": "0.32.0"}, options={"ltx-2": {"quantization": "fp8-cast"}}), db)
    assert "[packages] does not list" in err.message


def test_options_keys_are_normalized(db):
    stack = load_stack(base(packages={"vllm-omni": "0.32.0rc1"}, options={"vllm_omni": {"diffusion_kv_cache_dtype": "fp8"}}), db)
    assert stack.options == {"vllm-omni": {"diffusion-kv-cache-dtype": "fp8"}}
    assert stack.unknown_options == ()


def test_unknown_option_is_recorded_not_refused(db):
    stack = load_stack(base(packages={"vllm": "0.32.0"}, options={"vllm": {"made-up-flag": 1}}), db)
    assert stack.unknown_options == (("vllm", "made-up-flag"),)


def test_model_table(db):
    stack = load_stack(base(model={"name": "GLM-5.1", "family": "GLM-5", "head_dim": 128, "checkpoint_dtype": "BF16"}), db)
    assert stack.model.family == "glm-5" and stack.model.head_dim == 128 and stack.model.checkpoint_dtype == "bf16"


@pytest.mark.parametrize("head_dim", [0, "128", 12.5])
def test_bad_head_dim(head_dim, db):
    assert "head_dim" in str(error_of(base(model={"head_dim": head_dim}), db))


def test_env_values_must_be_strings(db):
    err = error_of(base(env={"FLASHINFER_DECODE_AUTO_CUDNN": 0}), db)
    assert 'quote it: FLASHINFER_DECODE_AUTO_CUDNN = "0"' in err.message


def test_compat_table(db):
    stack = load_stack(base(compat={"ignore": ["untracked:numpy"], "strict": True}), db)
    assert stack.ignore == ("untracked:numpy",) and stack.strict


def test_compat_ignore_must_be_strings(db):
    assert "ignore" in str(error_of(base(compat={"ignore": "x"}), db))


def test_cuda_and_rocm_together_are_an_error(db):
    assert "not both" in str(error_of({"system": {"python": "3.12", "cuda": "13.0", "rocm": "7.0"}}, db))


def test_error_names_line_of_key_in_file(write_stack, db):
    path = write_stack(
        """
        [system]
        python = "3.12"

        [hardware]
        gpu = "H999"
        """
    )
    err = error_of(path, db)
    assert err.line == 6
    assert str(err).startswith(f"{path}:6: [hardware] gpu: unknown GPU")


def test_specifier_that_admits_no_version_is_an_error(db):
    # PEP 440: "<0.7.2" excludes the pre-releases of 0.7.2, so nothing is left
    assert "admits no version" in str(error_of(base(packages={"flashinfer-python": ">=0.7.2rc1,<0.7.2"}), db))


# --- Reported failures: input that crashed the reader or hung it (docs/reliability.md, "Readers") ---

import os  # noqa: E402
import time  # noqa: E402

import compat  # noqa: E402
from compat import CompatError  # noqa: E402
from compat import _toml  # noqa: E402
from compat.sources import stack as stack_module  # noqa: E402


def cli_run(capsys, *args) -> tuple[int, str]:
    from compat import cli

    with pytest.raises(SystemExit) as info:
        cli.main(list(args))
    return info.value.code, capsys.readouterr().err


@pytest.mark.parametrize(
    "data, key",
    [
        ({"system": {"python": "３.１２"}}, "[system] python"),  # fullwidth digits
        ({"system": {"python": "3.12", "cuda": "１３.0"}}, "[system] cuda"),
        (base(packages={"vllm": "٠.٣٢.٠"}), "[packages] vllm"),  # Arabic-Indic digits
        ({"system": {"python": "3." + "1" * 4301}}, "[system] python"),  # past int()'s digit limit
        (base(packages={"vllm": "0." + "1" * 4301}), "[packages] vllm"),
        ({"system": {"python": "3.12", "platform": []}}, "[system] platform"),
        ({"system": {"python": "3.12", "platform": {}}}, "[system] platform"),
        (base(packages={"vllm": "1" * 1_000_000}), "[packages] vllm"),  # a 1 MB version string
        (base(packages={"vllm": "0.32." + "0" * 300}), "[packages] vllm"),
        (base(packages={1: "1.0"}), "[packages] 1 (int)"),  # a key that is not a string
        ({"system": {"python": "3.12"}, 2: {}}, "2 (int)"),
        (base(hardware={"count": 10**5000}), "[hardware] count"),  # repr() of it raises ValueError
        (base(hardware={"compute_capability": "９.0"}), "[hardware] compute_capability"),
        (base(hardware={"accelerator": ["cuda"]}), "[hardware] accelerator"),
        (base(env={"A": object()}), "[env] A"),
        (base(packages={"bad name!": "1.0"}), "[packages] 'bad name!'"),
        (base(packages={"vllm": {"version": "0.32.0", "extras": ["a b"]}}), "[packages] vllm"),
        (base(env={"A\nB": 1}), "[env] 'A\\nB'"),  # the error stays on one line
    ],
)
def test_hostile_values_are_a_stack_error_naming_the_key(db, data, key):
    err = error_of(data, db)
    assert err.key is not None and err.key.startswith(key.split(" ")[0]) and key in str(err)
    assert "\n" not in str(err) and len(str(err)) < 1000


def test_deep_lists_through_the_library_are_a_stack_error(db):
    deep: list = []
    for _ in range(100_000):  # built without recursion; read without it too
        deep = [deep]
    err = error_of(base(env={"A": deep}), db)
    assert "nested" in err.message and err.key == "[env] A"
    with pytest.raises(CompatError):
        compat.check(base(compat={"ignore": deep}), database=db)


def test_array_nested_500_deep_in_a_file_is_exit_2(write_stack, db, capsys):
    path = write_stack('[system]\npython = "3.12"\n[env]\nA = ' + "[" * 500 + "]" * 500 + "\n")
    err = error_of(path, db)
    assert "nested too deeply" in err.message and err.file == str(path)
    path = write_stack('[system]\npython = "3.12"\n[env]\nA = ' + "[" * 50 + "]" * 50 + "\n", "b.toml")
    assert "nested more than" in error_of(path, db).message
    code, err_text = cli_run(capsys, "check", str(path))
    assert code == 2 and err_text.count("\n") == 1 and err_text.startswith(f"compat: error: {path}")


@pytest.mark.parametrize("name", ['"A=B"', '""', '"A\\u0000"'])
def test_an_env_name_no_environment_can_hold_is_refused(write_stack, db, name):
    err = error_of(write_stack(f'[system]\npython = "3.12"\n[env]\n{name} = "1"\n'), db)
    assert "[env]" in err.key and "not an environment variable name" in err.message


def test_a_byte_order_mark_is_not_part_of_the_stack(tmp_path, db):
    """Some Windows editors start a UTF-8 file with one; it is not text, as pip reads requirements."""
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + b'[system]\npython = "3.12"\n[packages]\ntorch = "2.13.0"\n')
    assert str(load_stack(str(path), db).packages["torch"].pinned) == "2.13.0"


@pytest.mark.parametrize("name", ["x\\nOK: 0 error(s)", "tab\\there", "bell\\u0007"])
def test_a_stack_name_is_one_printable_line(write_stack, db, name):
    """Reports print it: a newline in it could forge a verdict line."""
    err = error_of(write_stack(f'[stack]\nname = "{name}"\n[system]\npython = "3.12"\n'), db)
    assert err.key == "[stack] name" and err.line == 2 and "one line" in err.message


def test_a_number_of_4301_digits_in_a_file_is_exit_2(write_stack, db):
    path = write_stack('[system]\npython = "3.12"\n[hardware]\ncount = ' + "1" * 4301 + "\n")
    assert "number too large" in error_of(path, db).message
    path = write_stack('[system]\npython = "3.12"\n[hardware]\ncount = ' + "9" * 30 + "\n", "b.toml")
    err = error_of(path, db)
    assert err.key == "[hardware] count" and err.line == 4


@pytest.mark.parametrize("line", ["[" + " " * 100_000, "[ " * 50_000, "[[" + " [" * 50_000 + "]"])
def test_a_header_like_line_does_not_slow_the_locator(write_stack, db, line):
    # A multi-line string holds the line, so the file parses and the error
    # locator reads every line to find [system] python.
    path = write_stack(f'[stack]\ndescription = """\n{line[:4000]}\n"""\n[system]\npython = 3.12\n')
    started = time.perf_counter()
    err = error_of(path, db)
    assert err.line == 6
    assert _toml.locate(line + "\n[system]\npython = 1\n", ("system",), "python") == 3
    # the header pattern on such a line, within the time below too: a header only when it closes
    assert (re.match(_toml._HEADER, line[: _toml.MAX_LINE]) is not None) == line[: _toml.MAX_LINE].endswith("]")
    assert time.perf_counter() - started < 1.0


def test_dev_zero_and_other_non_regular_files_are_refused(db, tmp_path):
    err = error_of("/dev/zero", db)
    assert err.file == "/dev/zero" and "not a regular file" in err.message
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        assert "not a regular file" in error_of(str(fifo), db).message  # and it does not block


def test_a_file_over_the_size_limit_is_refused(tmp_path, db, monkeypatch):
    path = tmp_path / "big.toml"
    path.write_text('[system]\npython = "3.12"\n' + "# padding\n" * (_toml.MAX_BYTES // 10), encoding="utf-8")
    err = error_of(path, db)
    assert err.file == str(path) and "larger than 4 MiB" in err.message


def test_stdin_is_read_with_the_limit(capsys, monkeypatch):
    import io

    class Stdin:
        buffer = io.BytesIO(b'[system]\npython = "3.12"\n')

    monkeypatch.setattr("sys.stdin", Stdin)
    code, _ = cli_run(capsys, "check", "-")
    assert code == 0
    Stdin.buffer = io.BytesIO(b"#" * (_toml.MAX_BYTES + 1))
    code, err = cli_run(capsys, "check", "-")
    assert code == 2 and "<stdin>: larger than 4 MiB" in err


def test_the_number_of_packages_is_limited(db):
    many = {f"pkg{i}x": "1.0" for i in range(stack_module.MAX_PACKAGES + 1)}
    started = time.perf_counter()
    err = error_of(base(packages=many), db)
    assert f"limited to {stack_module.MAX_PACKAGES:,}" in err.message and err.key == "packages"
    assert time.perf_counter() - started < 2.0
    assert len(load_stack(base(packages=dict(list(many.items())[:-1])), db).packages) == stack_module.MAX_PACKAGES


def test_the_number_of_values_is_limited(write_stack, db):
    lines = "\n".join(f'K{i} = "x"' for i in range(stack_module.MAX_VALUES + 1))
    path = write_stack(f'[system]\npython = "3.12"\n[env]\n{lines}\n')
    assert "limited to that many" in error_of(path, db).message


def test_ignore_as_a_string_is_one_id(db):
    stack = {"system": {"python": "3.12"}, "packages": {"numpy": "2.0.0", "requests": "2.33.1"}}
    report = compat.check(stack, database=db, ignore="glibc:unknown")
    assert [f.suppressed for f in report.findings if f.id == "glibc:unknown"] == [True]
    other = compat.check(stack, database=db, ignore="g")  # not read letter by letter
    assert [f.suppressed for f in other.findings if f.id == "glibc:unknown"] == [False]


@pytest.mark.parametrize("pattern", ["*", "**", "?*", " * ", ""])
def test_an_ignore_pattern_of_wildcards_alone_is_refused(db, pattern):
    with pytest.raises(CompatError) as info:
        compat.check(base(), database=db, ignore=[pattern])
    assert info.value.key == "ignore"
    assert "ignore" in str(error_of(base(compat={"ignore": ["vllm.*", pattern]}), db))


def test_a_wildcard_pattern_that_names_something_is_accepted(db):
    assert load_stack(base(compat={"ignore": ["requires-python:*"]}), db).ignore == ("requires-python:*",)


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"stack": 3}, TypeError),
        ({"stack": b"stack.toml"}, TypeError),
        ({"stack": ["system"]}, TypeError),
        ({"strict": "yes"}, TypeError),
        ({"require_known": 1}, TypeError),
        ({"max_rounds": "10"}, TypeError),
        ({"max_rounds": True}, TypeError),
        ({"max_rounds": 0}, ValueError),
        ({"ignore": 5}, TypeError),
        ({"ignore": ["a", 5]}, TypeError),
        ({"database": "data/"}, TypeError),
        ({"suggest": "no"}, TypeError),
    ],
)
def test_library_arguments_are_type_checked(db, kwargs, exc):
    args = {"stack": base(), **kwargs}
    if "database" not in kwargs:
        args["database"] = db
    with pytest.raises(exc, match="compat.check"):
        compat.check(args.pop("stack"), **args)


def test_a_check_without_suggestions_has_the_same_findings_and_no_fixes(db):
    broken = {"system": {"python": "3.12", "cuda": "13.0"}, "hardware": {"gpu": "V100"}, "packages": {"vllm": "0.32.0"}}
    full, bare = compat.check(broken, database=db), compat.check(broken, database=db, suggest=False)
    assert not full.ok and not bare.ok
    assert full.explanation is not None and bare.explanation is None and not bare.suggestions
    # the search's own finding (suggestions:none, when nothing fits) is the one difference
    assert {f.id for f in bare.findings} == {f.id for f in full.findings} - {"suggestions:none"}


def test_a_dotted_key_of_thousands_of_parts_is_refused_before_parsing(write_stack, db):
    # tomllib's time grows with the square of the parts: 20,000 took 36 s
    path = write_stack('[system]\npython = "3.12"\n[env]\n' + "a." * 20_000 + 'b = "x"\n')
    started = time.perf_counter()
    err = error_of(path, db)
    assert err.line == 4 and "dotted key" in err.message
    assert time.perf_counter() - started < 1.0
    path = write_stack("[" + "a." * 20_000 + "b]\n", "b.toml")
    assert "dotted key" in error_of(path, db).message


@pytest.mark.parametrize("text, says", [
    ('[system]\npython = "3.12"\n[system]\ncuda = "13.0"\n', ":3:8: invalid TOML: the table [system] is declared twice"),
    ('[system]\npython = "3.12"\n[packages]\nvllm = "0.32.0"\nvllm = "0.33.0"\n',
     ":5:16: invalid TOML: vllm is given twice"),
    ('[options."vllm"]\na = 1\n[options.vllm]\nb = 2\n', ':3:14: invalid TOML: the table [options.vllm] is declared twice'),
])
def test_a_key_or_table_given_twice_is_named(tmp_path, text, says):
    path = tmp_path / "stack.toml"
    path.write_text(text)
    with pytest.raises(StackError) as err:
        load_stack(path)
    assert says in str(err.value)
