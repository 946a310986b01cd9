"""The GPU catalog as people type into it: the names nvidia-smi and rocm-smi
print, vendor words, ambiguous names, unknown GPUs and `compat db show gpus`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from compat import Database
from compat.cli import cli
from compat.errors import StackError
from compat.knowledge import catalog as catalog_module
from compat.knowledge.catalog import GpuCatalog
from compat.knowledge.lint import lint_database
from compat.knowledge.binding import load_stack

from .conftest import copy_database

# What `nvidia-smi --query-gpu=name --format=csv,noheader` prints, the catalog
# entry it must resolve to, and that entry's compute capability.
NVIDIA_SMI = [
    ("NVIDIA H100 80GB HBM3", "H100", "9.0"),
    ("NVIDIA H100 PCIe", "H100 PCIe", "9.0"),
    ("NVIDIA H100 NVL", "H100 NVL", "9.0"),
    ("NVIDIA H800", "H800", "9.0"),
    ("NVIDIA H800 PCIe", "H800 PCIe", "9.0"),
    ("NVIDIA H20", "H20", "9.0"),
    ("NVIDIA H200", "H200", "9.0"),
    ("NVIDIA H200 NVL", "H200 NVL", "9.0"),
    ("NVIDIA GH200 480GB", "GH200", "9.0"),
    ("NVIDIA GH200 144G HBM3e", "GH200", "9.0"),
    ("NVIDIA B200", "B200", "10.0"),
    ("NVIDIA GB200", "GB200", "10.0"),
    ("NVIDIA B300 SXM6 AC", "B300", "10.3"),
    ("NVIDIA GB10", "DGX Spark GB10", "12.1"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell Server Edition", "12.0"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000 Blackwell Workstation Edition", "12.0"),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX PRO 6000 Blackwell Max-Q Workstation Edition", "12.0"),
    ("NVIDIA GeForce RTX 5090", "RTX 5090", "12.0"),
    ("NVIDIA GeForce RTX 5080", "RTX 5080", "12.0"),
    ("NVIDIA GeForce RTX 5070 Ti", "RTX 5070 Ti", "12.0"),
    ("Tesla V100-SXM2-32GB", "V100 32GB", "7.0"),
    ("Tesla V100-SXM2-16GB", "V100 16GB", "7.0"),
    ("Tesla V100-PCIE-16GB", "V100 16GB", "7.0"),
    ("Tesla V100-PCIE-32GB", "V100 32GB", "7.0"),
    ("Tesla V100-SXM3-32GB", "V100 32GB", "7.0"),
    ("Tesla V100S-PCIE-32GB", "V100S", "7.0"),
    ("Tesla P100-PCIE-16GB", "P100", "6.0"),
    ("Tesla P40", "P40", "6.1"),
    ("Tesla P4", "P4", "6.1"),
    ("Tesla T4", "T4", "7.5"),
    ("NVIDIA A100-SXM4-80GB", "A100 80GB", "8.0"),
    ("NVIDIA A100-SXM4-40GB", "A100 40GB", "8.0"),
    ("NVIDIA A100-PCIE-40GB", "A100 40GB", "8.0"),
    ("NVIDIA A100 80GB PCIe", "A100 80GB", "8.0"),
    ("NVIDIA A100-SXM-80GB", "A100 80GB", "8.0"),
    ("NVIDIA A800-SXM4-80GB", "A800 80GB", "8.0"),
    ("NVIDIA A800 80GB PCIe", "A800 80GB", "8.0"),
    ("NVIDIA A30", "A30", "8.0"),
    ("NVIDIA A40", "A40", "8.6"),
    ("NVIDIA A10", "A10", "8.6"),
    ("NVIDIA A10G", "A10G", "8.6"),
    ("NVIDIA A16", "A16", "8.6"),
    ("NVIDIA A2", "A2", "8.6"),
    ("NVIDIA RTX A6000", "RTX A6000", "8.6"),
    ("NVIDIA RTX A5000", "RTX A5000", "8.6"),
    ("NVIDIA RTX A4000", "RTX A4000", "8.6"),
    ("NVIDIA RTX A2000 12GB", "RTX A2000", "8.6"),
    ("NVIDIA GeForce RTX 3090", "RTX 3090", "8.6"),
    ("NVIDIA GeForce RTX 3090 Ti", "RTX 3090 Ti", "8.6"),
    ("NVIDIA GeForce RTX 3080 Ti", "RTX 3080 Ti", "8.6"),
    ("NVIDIA GeForce RTX 3060", "RTX 3060", "8.6"),
    ("Orin (nvgpu)", "Jetson Orin", "8.7"),
    ("NVIDIA L4", "L4", "8.9"),
    ("NVIDIA L40", "L40", "8.9"),
    ("NVIDIA L40S", "L40S", "8.9"),
    ("NVIDIA L20", "L20", "8.9"),
    ("NVIDIA L2", "L2", "8.9"),
    ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada Generation", "8.9"),
    ("NVIDIA RTX 4000 SFF Ada Generation", "RTX 4000 SFF Ada Generation", "8.9"),
    ("NVIDIA RTX 2000 Ada Generation", "RTX 2000 Ada Generation", "8.9"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090", "8.9"),
    ("NVIDIA GeForce RTX 4080 SUPER", "RTX 4080 SUPER", "8.9"),
    ("NVIDIA GeForce RTX 4070 Ti", "RTX 4070 Ti", "8.9"),
    ("NVIDIA GeForce RTX 4060", "RTX 4060", "8.9"),
    ("Quadro RTX 6000", "Quadro RTX 6000", "7.5"),
    ("Quadro RTX 8000", "Quadro RTX 8000", "7.5"),
    ("NVIDIA TITAN RTX", "TITAN RTX", "7.5"),
    ("NVIDIA GeForce RTX 2080 Ti", "RTX 2080 Ti", "7.5"),
    ("NVIDIA GeForce GTX 1660 SUPER", "GTX 1660 SUPER", "7.5"),
    ("NVIDIA TITAN V", "TITAN V", "7.0"),
    ("NVIDIA TITAN Xp", "TITAN Xp", "6.1"),
    ("NVIDIA GeForce GTX 1080 Ti", "GTX 1080 Ti", "6.1"),
    ("GeForce GTX 1080 Ti", "GTX 1080 Ti", "6.1"),
    # the node-feature-discovery label (nvidia.com/gpu.product) spells them with dashes
    ("NVIDIA-H100-80GB-HBM3", "H100", "9.0"),
    ("NVIDIA-A100-SXM4-80GB", "A100 80GB", "8.0"),
    ("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "RTX PRO 6000 Blackwell Server Edition", "12.0"),
]

# What `rocm-smi --showproductname` prints as the card series.
ROCM_SMI = [
    ("AMD Instinct MI300X", "MI300X", "gfx942"),
    ("AMD Instinct MI300X VF", "MI300X", "gfx942"),
    ("AMD Instinct MI325X", "MI325X", "gfx942"),
    ("AMD Instinct MI350X", "MI350X", "gfx950"),
    ("AMD Instinct MI355X", "MI355X", "gfx950"),
    ("AMD Instinct MI250X", "MI250X", "gfx90a"),
    ("AMD Instinct MI210", "MI210", "gfx90a"),
    ("AMD Instinct MI100", "MI100", "gfx908"),
    ("AMD Radeon PRO W7900", "Radeon PRO W7900", "gfx1100"),
    ("AMD Radeon RX 7900 XTX", "Radeon RX 7900 XTX", "gfx1100"),
]

VENDOR_WORDS = ["NVIDIA", "AMD", "GeForce", "Tesla", "Radeon", "Instinct", "Quadro", "RTX", "Apple",
                "NVIDIA GeForce RTX", "AMD Radeon Graphics"]

GPU_FILE = "gpus.toml"


@pytest.fixture(scope="module")
def catalog(db) -> GpuCatalog:
    return db.catalog


@pytest.fixture
def run():
    def invoke(*args: str):
        return CliRunner().invoke(cli, [str(a) for a in args])

    return invoke


def gpu_error(name: str, db: Database, **hardware) -> str:
    with pytest.raises(StackError) as info:
        load_stack({"system": {"python": "3.12"}, "hardware": {"gpu": name, **hardware}}, db)
    return str(info.value)


def test_the_lists_are_long_enough():
    assert len(NVIDIA_SMI) >= 40 and len(ROCM_SMI) >= 5


@pytest.mark.parametrize(("printed", "entry", "cc"), NVIDIA_SMI)
def test_nvidia_smi_names_resolve(printed, entry, cc, catalog, db):
    gpu = catalog.find(printed)
    assert gpu is not None and gpu.name == entry, printed
    assert gpu.compute_capability == Version(cc)
    # the check path reads one [[gpu]] table and must find the same
    assert GpuCatalog.find_in_file(os.path.join(db.root, GPU_FILE), printed) == gpu


@pytest.mark.parametrize(("printed", "entry", "gfx"), ROCM_SMI)
def test_rocm_smi_names_resolve(printed, entry, gfx, catalog):
    gpu = catalog.find(printed)
    assert gpu is not None and gpu.name == entry, printed
    assert gpu.gfx_target == gfx and gpu.compute_capability is None and gpu.accelerator == "rocm"


@pytest.mark.parametrize(
    ("printed", "entry", "cc"),
    [("NVIDIA H100 80GB HBM3", "H100", "9.0"), ("Tesla V100-SXM2-32GB", "V100 32GB", "7.0"),
     ("NVIDIA GeForce RTX 4090", "RTX 4090", "8.9"), ("NVIDIA L20", "L20", "8.9")],
)
def test_a_stack_takes_nvidia_smi_names(printed, entry, cc, db):
    hardware = load_stack({"system": {"python": "3.12", "cuda": "12.8"}, "hardware": {"gpu": printed}}, db).hardware
    assert hardware.gpu.name == entry and hardware.compute_capability == Version(cc) and hardware.accelerator == "cuda"


def test_a_stack_takes_rocm_smi_names(db):
    hardware = load_stack({"system": {"python": "3.12", "rocm": "7.0"}, "hardware": {"gpu": "AMD Instinct MI300X"}}, db).hardware
    assert hardware.gpu.name == "MI300X" and hardware.accelerator == "rocm"


def test_a_check_reads_one_gpu_table(monkeypatch):
    parsed: list[str] = []
    real = catalog_module._toml.loads

    def counting(text, **kwargs):
        parsed.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(catalog_module._toml, "loads", counting)
    fresh = Database.load()
    stack = load_stack({"system": {"python": "3.12"}, "hardware": {"gpu": "NVIDIA H100 PCIe"}}, fresh)
    assert stack.hardware.gpu.name == "H100 PCIe"
    parsed = [text for text in parsed if "[[platform]]" not in text]  # the platform table: [system] platform is bound
    assert len(parsed) == 1 and parsed[0].count("[[gpu]]") == 1
    assert fresh._catalog is None  # the whole catalog was never parsed


# -- vendor words ----------------------------------------------------------------


@pytest.mark.parametrize("word", VENDOR_WORDS)
def test_vendor_words_alone_are_no_gpu(word, catalog, db):
    assert catalog.find(word) is None
    assert catalog.match(word).vendor_only
    assert GpuCatalog.find_in_file(os.path.join(db.root, GPU_FILE), word) is None
    message = gpu_error(word, db)
    assert "vendor" in message and "[hardware] gpu" in message


def test_a_vendor_word_alone_exits_2(run, tmp_path):
    path = tmp_path / "stack.toml"
    path.write_text('[system]\npython = "3.12"\n[hardware]\ngpu = "NVIDIA"\n')
    result = run("check", path)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"{path}:4: [hardware] gpu: 'NVIDIA' names a vendor" in lines[0]


def test_vendor_words_before_a_model_still_work(catalog):
    assert catalog.find("Apple M3 Max").name == "Apple M3"
    assert catalog.find("nvidia geforce rtx-4090").name == "RTX 4090"


# -- ambiguous names ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "candidates", "not_candidates"),
    [
        ("RTX 6000", ["Quadro RTX 6000", "RTX 6000 Ada Generation", "RTX PRO 6000 Blackwell Server Edition",
                      "RTX PRO 6000 Blackwell Workstation Edition"], ["RTX A6000"]),
        ("RTX PRO 6000", ["RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell Max-Q Workstation Edition"],
         ["Quadro RTX 6000", "RTX 6000 Ada Generation"]),
        ("RTX 4000", ["Quadro RTX 4000", "RTX 4000 Ada Generation", "RTX PRO 4000 Blackwell"], ["RTX A4000"]),
    ],
)
def test_an_ambiguous_name_lists_its_candidates(name, candidates, not_candidates, catalog, db):
    found = catalog.match(name)
    assert found.gpu is None and found.ambiguous
    names = [g.name for g in found.candidates]
    assert set(candidates) <= set(names) and not set(not_candidates) & set(names)
    assert GpuCatalog.find_in_file(os.path.join(db.root, GPU_FILE), name) is None
    message = gpu_error(name, db)
    assert "ambiguous" in message
    for candidate in candidates:
        assert candidate in message


def test_an_ambiguous_name_exits_2_on_one_line(run, tmp_path):
    path = tmp_path / "stack.toml"
    path.write_text('[system]\npython = "3.12"\ncuda = "13.0"\n[hardware]\ngpu = "RTX 6000"\n')
    result = run("check", path)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert f"{path}:5: [hardware] gpu: 'RTX 6000' is ambiguous" in lines[0]
    assert "Quadro RTX 6000 (sm_75)" in lines[0] and "RTX 6000 Ada Generation (sm_89)" in lines[0]
    assert "Traceback" not in result.output


def test_part_of_one_name_means_that_gpu(catalog, db):
    assert catalog.find("4090").name == "RTX 4090"
    assert GpuCatalog.find_in_file(os.path.join(db.root, GPU_FILE), "4090").name == "RTX 4090"


# -- unknown GPUs --------------------------------------------------------------------


def test_an_unknown_gpu_of_a_known_family_gets_an_inferred_compute_capability(db):
    message = gpu_error("RTX 4070 Ti Mobile", db)
    assert "unknown GPU" in message and "inferred" in message
    assert 'compute_capability = "8.9"' in message and "RTX 40xx" in message
    assert "did you mean 'RTX 4070 Ti'" in message


@pytest.mark.parametrize("name", ["Banana X1", "Zeta Accelerator", "Foo 9"])
def test_an_unknown_gpu_gets_no_invented_compute_capability(name, db):
    message = gpu_error(name, db)
    assert "unknown GPU" in message and "compute_capability" in message
    assert not re.search(r"\d+\.\d+", message), message
    assert "inferred" not in message


def test_a_family_that_disagrees_infers_nothing(catalog):
    # the catalog's RTX 50xx are Blackwell (12.0), its RTX 5000 Ada is 8.9: only
    # names carrying the same words count
    assert catalog.infer("RTX 5070 Max-Q").compute_capability == Version("12.0")
    assert catalog.infer("MI308X") is None  # MI3xx: gfx942 and gfx950


def test_the_suggestion_keeps_the_compute_capability_the_name_implies(catalog, db):
    assert catalog.find("L20").compute_capability == Version("8.9")  # Ada, not the Hopper L20X
    message = gpu_error("L20 48GB", db)
    assert "L20X" not in message and "did you mean 'L20'" in message and '"8.9"' in message
    guess = catalog.suggest("RTX 5070 Max-Q", catalog.infer("RTX 5070 Max-Q"))
    assert catalog.find(guess).compute_capability == Version("12.0")


def test_an_unknown_gpu_exits_2_without_inventing(run, tmp_path):
    path = tmp_path / "stack.toml"
    path.write_text('[system]\npython = "3.12"\n[hardware]\ngpu = "Banana X1"\n')
    result = run("check", path)
    assert result.exit_code == 2
    assert f"{path}:4: [hardware] gpu: unknown GPU 'Banana X1'" in result.output
    assert "9.0" not in result.output


# -- compat db show gpus --------------------------------------------------------------


def test_db_show_gpus_text(run, catalog):
    result = run("db", "show", "gpus")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:3] == ["GPU", "vendor", "architecture"]
    ada = next(line for line in lines if line.startswith("RTX 6000 Ada Generation "))
    assert ada.split()[-4:] == ["8.9", "48", "GB", "workstation"]
    assert any(line.startswith("MI300X ") and "gfx942" in line for line in lines)
    assert f"{len(catalog.gpus)} GPUs" in lines[-1]


def test_db_show_gpus_json(run, catalog):
    result = run("db", "show", "gpus", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert len(rows) == len(catalog.gpus)
    by_name = {row["name"]: row for row in rows}
    assert by_name["H100"]["compute_capability"] == "9.0" and by_name["H100"]["memory_gb"] == 80
    assert "NVIDIA H100 80GB HBM3" in by_name["H100"]["aliases"]
    assert by_name["MI300X"]["gfx_target"] == "gfx942" and by_name["MI300X"]["compute_capability"] is None
    assert {"name", "vendor", "architecture", "compute_capability", "gfx_target", "memory_gb", "segment", "source"} <= set(rows[0])


# -- lint ----------------------------------------------------------------------------------


# The bundled catalog lints clean: tests/test_database.py::test_bundled_database_lints_clean
# and tests/test_cli.py::test_db_lint_passes_on_the_bundled_database lint the whole database.


def test_lint_rejects_shared_and_vendor_only_aliases(tmp_path):
    root = copy_database(tmp_path / "data")
    gpus = root / GPU_FILE
    text = gpus.read_text()
    text = text.replace('aliases = ["MPS", "Apple MPS"]', 'aliases = ["MPS", "Apple"]', 1)
    text = text.replace('aliases = ["NVIDIA H100 80GB HBM3",', 'aliases = ["NVIDIA H200", "NVIDIA H100 80GB HBM3",', 1)
    gpus.write_text(text)
    problems = [str(p) for p in lint_database(Database.load(root)) if p.file.endswith(GPU_FILE)]
    assert any("'Apple' is only vendor" in p for p in problems), problems
    # the H100 (earlier in the file) now claims "NVIDIA H200": the H200's own names are reported
    assert any("gpu['H200']: 'NVIDIA H200' is also a name or alias of 'H100'" in p for p in problems), problems


def test_every_nvidia_gpu_has_a_compute_capability_and_every_amd_gpu_a_gfx_target(catalog):
    for gpu in catalog.gpus:
        if gpu.vendor == "nvidia":
            assert gpu.compute_capability is not None, gpu.name
        elif gpu.vendor == "amd":
            assert gpu.gfx_target and gpu.gfx_target.startswith("gfx"), gpu.name


def test_db_show_points_gpu_names_at_the_catalog(run):
    result = run("db", "show", "H100")
    assert result.exit_code == 2 and "compat db show gpus" in result.output
    assert "did you mean 'gpus'" in run("db", "show", "gpu").output


# -- what a source states, and what the catalog infers -------------------------------------

# NVIDIA's compute capability tables do not list these by name: their compute
# capability is the chip's, and the entry says so.
INFERRED = ["A800", "A800 80GB", "A800 40GB Active", "A10G", "H800", "H800 PCIe", "L20", "L2",
            "RTX A5500", "RTX A4500", "B100"]
# GPUs that come only with their own Arm host CPU.
ARM_HOSTED = ["GH200", "GB200", "GB300", "DGX Spark GB10", "Jetson Thor", "Jetson Orin", "Jetson Xavier", "Jetson TX2"]


def test_a_compute_capability_the_tables_do_not_state_is_marked_inferred_with_its_basis(catalog):
    for name in INFERRED:
        gpu = catalog.find(name)
        assert gpu.inferred and gpu.basis and str(gpu.compute_capability) in gpu.basis, name
    assert not catalog.find("H100").inferred and catalog.find("H100").basis is None
    # the H20 is stated by NVIDIA's MIG guide, not inferred
    h20 = catalog.find("H20")
    assert not h20.inferred and h20.source == "nvidia-mig-supported-gpus"


def test_an_arm_hosted_gpu_names_its_host_and_cites_both_facts(catalog, db):
    for name in ARM_HOSTED:
        gpu = catalog.find(name)
        assert gpu.host == "linux-aarch64" and gpu.host in db.platforms, name
        assert gpu.compute_capability_source in db.sources and gpu.source in db.sources, name
    assert {gpu.name for gpu in catalog.gpus if gpu.host} == set(ARM_HOSTED)


def test_every_compute_capability_source_is_a_known_source(catalog, db):
    # lint cites each entry's source; this is the other source an entry may name
    cited = {gpu.compute_capability_source for gpu in catalog.gpus} - {None}
    assert cited and cited <= set(db.sources)


@pytest.mark.parametrize("change, key", [
    ('inferred = true\n', "basis"),                   # inferred without a basis
    ('basis = "the chip of the A100"\n', "basis"),    # a basis without inferred
    ('inferred = "yes"\n', "inferred"),
])
def test_an_inference_without_its_basis_is_a_database_error(tmp_path, change, key):
    from compat.errors import DatabaseError

    text = Path(Database.load().root, GPU_FILE).read_text()
    block = text.index('name = "A100 40GB"')
    at = text.index("source = ", block)
    path = tmp_path / GPU_FILE
    path.write_text(text[:at] + change + text[at:])
    with pytest.raises(DatabaseError) as info:
        GpuCatalog.load(str(path))
    assert info.value.key.endswith(key)
