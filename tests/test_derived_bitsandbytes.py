"""bitsandbytes' builds, derived from its wheels (tools/derive_bitsandbytes.py,
data/derived/bitsandbytes.toml): the script's readers and what it makes of a
wheel's libraries, and the derived facts in the bundled database.
"""

from __future__ import annotations

import functools
import struct

import compat

from .conftest import load_tool

tool = load_tool("derive_bitsandbytes")
arch_tool = load_tool("derive_wheel_archs")
check = functools.partial(compat.check, suggest=False)


def test_a_library_s_machine_is_read_from_its_elf_or_pe_header():
    assert tool.machine(b"\x7fELF" + bytes(14) + struct.pack("<H", 62)) == "x86_64"
    assert tool.machine(b"\x7fELF" + bytes(14) + struct.pack("<H", 183)) == "aarch64"
    assert tool.machine(b"MZ" + bytes(58) + struct.pack("<I", 64) + b"PE\0\0" + struct.pack("<H", 0xAA64)) == "aarch64"
    assert tool.machine(b"\xcf\xfa\xed\xfe" + bytes(60)) is None  # Mach-O: not read


def test_the_cuda_of_a_library_is_read_from_its_name():
    assert tool.cuda_of("bitsandbytes/libbitsandbytes_cuda128.so") == "12.8"
    assert tool.cuda_of("bitsandbytes/libbitsandbytes_cuda117_nocublaslt.so") == "11.7"
    assert tool.cuda_of("bitsandbytes/libbitsandbytes_cpu.so") is None


def wheel(version: str, tag: str):
    return arch_tool.Wheel(version, f"bitsandbytes-{version}-py3-none-{tag}.whl", f"https://files.example/{version}",
                           "0" * 64, 1, "2025-01-01")


def lib(name: str, machine="x86_64", sass=(), ptx=()):
    return {"name": f"bitsandbytes/{name}", "machine": machine, "sass": list(sass), "ptx": list(ptx)}


def test_a_platform_wheel_is_a_cuda_build_of_what_some_library_serves():
    read = [(wheel("1.0", "manylinux_2_24_x86_64"), "linux-x86_64",
             [lib("libbitsandbytes_cpu.so"), lib("libbitsandbytes_cuda118.so", sass=["7.5", "8.0"], ptx=["9.0"]),
              lib("libbitsandbytes_cuda128.so", sass=["8.0", "10.0", "12.0"], ptx=["12.0"])])]
    sources, builds, rules = tool.derive(read)
    (build,) = builds
    assert build["archs"] == ["7.5", "8.0", "10.0", "12.0"] and build["ptx"] == "9.0" and build["cuda"] == "11.8"
    assert build["platforms"] == ["linux-x86_64"] and build["needs_gpu"] is False and rules == []
    assert build["source"] in {s["id"] for s in sources}


def test_a_wheel_with_the_cpu_library_alone_is_a_cpu_build():
    _, builds, _ = tool.derive([(wheel("1.0", "macosx_14_0_arm64"), "macos-arm64",
                                 [lib("libbitsandbytes_cpu.dylib", machine=None)])])
    assert builds[0]["accelerator"] == "cpu" and "archs" not in builds[0]


def test_an_any_wheel_with_one_platform_s_libraries_is_that_platform_s_build_and_a_rule():
    libraries = [lib("libbitsandbytes_cpu.so"), lib("libbitsandbytes_cuda121.so", sass=["8.0"])]
    read = [(wheel("0.9", "any"), "any", libraries), (wheel("1.0", "any"), "any", libraries),
            (wheel("1.1", "manylinux_2_24_x86_64"), "linux-x86_64", libraries)]
    _, builds, rules = tool.derive(read)
    assert [b["platforms"] for b in builds] == [["linux-x86_64"]] * 3
    (rule,) = rules
    assert rule["releases"] == ">=0.9,<=1.0" and rule["require"] == {"platform": ["linux-x86_64"]}


def run(version: str, platform: str, db, **hardware) -> dict[str, str]:
    report = check({"system": {"python": "3.11", "platform": platform}, "hardware": hardware,
                    "packages": {"bitsandbytes": version, "torch": "2.5.1"}}, database=db)
    return {f.id: f.severity for f in report.findings}


RULE = "bitsandbytes.derived.0.42.0.native-libraries.platforms"


def test_0_42_0_has_no_library_for_aarch64(db):
    assert run("0.42.0", "linux-aarch64", db, compute_capability="8.7").get(RULE) == "error"
    assert RULE not in run("0.42.0", "linux-x86_64", db, gpu="A100 80GB")
    assert RULE not in run("0.46.1", "linux-aarch64", db, compute_capability="8.7")


def test_a_gpu_no_library_serves_is_an_error_and_one_they_serve_is_not(db):
    assert run("0.46.1", "linux-x86_64", db, compute_capability="3.7").get("arch:bitsandbytes==0.46.1") == "error"
    assert "arch:bitsandbytes==0.46.1" not in run("0.46.1", "linux-x86_64", db, gpu="A100 80GB")
    # sm_87 runs the sm_80 kernels of the aarch64 wheel (binary compatibility within a major)
    assert "arch:bitsandbytes==0.46.1" not in run("0.46.1", "linux-aarch64", db, compute_capability="8.7")


def test_no_build_warning_where_the_wheels_were_read(db):
    for version, platform, hardware in (("0.42.0", "linux-x86_64", {"gpu": "A100 80GB"}),
                                        ("0.49.0", "macos-arm64", {}), ("0.48.0", "windows-x86_64", {"gpu": "L4"})):
        assert f"build:bitsandbytes=={version}" not in run(version, platform, db, **hardware)
