"""The stack file, as the v1 contract specifies it."""

from __future__ import annotations

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
