"""The platform table (data/platforms.toml, knowledge/platforms.py): what a
platform name means is data, read from the database a stack is bound with."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

import compat
from compat import Database, DatabaseError, StackError, load_stack
from compat.cli import cli
from compat.engine.builds import Platform
from compat.formats.pylock import supported_tags
from compat.knowledge.lint import lint_database
from compat.knowledge.platforms import MARKERS, load_platforms
from compat.sources.stack import read_stack
from compat.stack import Stack, System

from .conftest import copy_database

RISCV = '''
[[platform]]
name = "linux-riscv64"

[platform.markers]
sys_platform = "linux"
platform_system = "Linux"
platform_machine = "riscv64"
os_name = "posix"
source = "pypa-environment-markers"

[platform.wheels]
manylinux = "riscv64"
source = "pypa-platform-compatibility-tags"

[platform.hosts]
machines = ["riscv64"]
source = "python-platform-machine"
'''


@pytest.fixture(scope="module")
def copied(tmp_path_factory) -> Path:
    return copy_database(tmp_path_factory.mktemp("platforms") / "data")


@pytest.fixture
def data(copied, tmp_path) -> Path:
    return Path(shutil.copytree(copied, tmp_path / "data"))


def with_table(data: Path, text: str) -> Path:
    (data / "platforms.toml").write_text(text, encoding="utf-8")
    return data


def test_the_bundled_table_holds_the_five_platforms_and_their_markers(db):
    assert db.platforms.names() == ("linux-x86_64", "linux-aarch64", "macos-arm64", "macos-x86_64", "windows-x86_64")
    markers = {entry.name: dict(entry.markers) for entry in db.platforms}
    assert markers["linux-aarch64"] == {"sys_platform": "linux", "platform_system": "Linux",
                                        "platform_machine": "aarch64", "os_name": "posix"}
    assert markers["windows-x86_64"] == {"sys_platform": "win32", "platform_system": "Windows",
                                         "platform_machine": "AMD64", "os_name": "nt"}
    assert all(tuple(values) == MARKERS for values in markers.values())
    assert [entry.name for entry in db.platforms if entry.glibc] == ["linux-x86_64", "linux-aarch64"]


@pytest.mark.parametrize(("host", "platform"), [
    (("linux", "x86_64"), "linux-x86_64"), (("linux", "aarch64"), "linux-aarch64"), (("linux", "arm64"), "linux-aarch64"),
    (("darwin", "arm64"), "macos-arm64"), (("darwin", "x86_64"), "macos-x86_64"), (("win32", "AMD64"), "windows-x86_64"),
    (("win32", "x86_64"), "windows-x86_64"), (("freebsd", "amd64"), None), (("linux", "riscv64"), None),
])
def test_a_host_is_the_platform_the_table_says(db, host, platform):
    found = db.platforms.for_host(*host)
    assert (found.name if found is not None else None) == platform


@pytest.mark.parametrize(("platform", "tag", "fits"), [
    ("linux-x86_64", "manylinux_2_28_x86_64", (2, 28)), ("linux-x86_64", "manylinux1_x86_64", (2, 5)),
    ("linux-x86_64", "linux_x86_64", None), ("linux-x86_64", "manylinux_2_28_aarch64", False),
    ("linux-aarch64", "manylinux2014_aarch64", (2, 17)), ("linux-aarch64", "manylinux1_aarch64", False),
    ("linux-x86_64", "manylinux_²_17_x86_64", False), ("linux-x86_64", "any", None),
    ("macos-arm64", "macosx_11_0_arm64", None), ("macos-arm64", "macosx_10_9_universal2", None),
    ("macos-arm64", "macosx_10_9_x86_64", False), ("macos-x86_64", "macosx_10_9_fat64", None),
    ("macos-x86_64", "macosx_10_9_universal", None), ("windows-x86_64", "win_amd64", None),
    ("windows-x86_64", "win32", False),
])
def test_which_wheel_tags_fit_a_platform_is_the_table_s(db, platform, tag, fits):
    stack = load_stack({"system": {"python": "3.12", "platform": platform}}, db)
    assert Platform(stack.system).glibc_of(tag) == fits
    assert db.platforms.get(platform).glibc_of(tag) == fits


def test_a_platform_added_to_a_copy_of_the_database_is_accepted_and_gets_its_markers(data, db):
    copy = Database.load(with_table(data, (data / "platforms.toml").read_text(encoding="utf-8") + RISCV))
    stack = load_stack({"system": {"python": "3.12.3", "platform": "linux-riscv64", "glibc": "2.39"}}, copy)
    environment = stack.system.marker_environment()
    assert (environment["platform_machine"], environment["sys_platform"]) == ("riscv64", "linux")
    assert environment["python_full_version"] == "3.12.3"
    platform = Platform(stack.system)
    assert platform.accepts("cp312", "cp312", "manylinux_2_39_riscv64") == (2, 39)
    assert platform.accepts("cp312", "cp312", "manylinux_2_40_riscv64") is False  # newer than the stack's glibc
    assert platform.accepts("cp312", "cp312", "manylinux_2_28_x86_64") is False
    assert copy.platforms.for_host("linux", "riscv64").name == "linux-riscv64"
    assert compat.check(stack, database=copy).ok
    # the bundled database knows no such platform, and says which it knows
    with pytest.raises(StackError, match=r"unknown platform 'linux-riscv64'.* \(one of linux-x86_64, linux-aarch64, "
                                         r"macos-arm64, macos-x86_64, windows-x86_64\)$"):
        load_stack({"system": {"python": "3.12", "platform": "linux-riscv64"}}, db)
    # a stack bound with the bundled database since: the copy's check still reads the copy's table
    load_stack({"system": {"python": "3.12"}}, db)
    from compat.engine.check import check_stack  # (compat.check binds the stack again: the engine itself here)
    from compat.engine.resolver import forget_resolutions

    forget_resolutions()  # resolved again, not the resolution of the check above
    assert check_stack(stack, copy, suggest_fixes=False).ok
    assert Platform.of(stack.system, copy).markers()["platform_machine"] == "riscv64"


def test_a_build_may_name_a_platform_of_the_table(data):
    copy = with_table(data, (data / "platforms.toml").read_text(encoding="utf-8") + RISCV)
    kern = copy / "constraints" / "torch.toml"
    text = kern.read_text(encoding="utf-8")
    kern.write_text(text.replace('platforms = ["linux-x86_64"', 'platforms = ["linux-riscv64", "linux-x86_64"', 1),
                    encoding="utf-8")
    assert any("linux-riscv64" in build.platforms for build in Database.load(copy).component("torch").builds)
    kern.write_text(text.replace('platforms = ["linux-x86_64"', 'platforms = ["linux-riscv", "linux-x86_64"', 1),
                    encoding="utf-8")
    with pytest.raises(DatabaseError, match=r"torch\.toml.*platforms\[0\].*unknown platform 'linux-riscv' \(one of "
                                            r"linux-x86_64, .*linux-riscv64\)"):
        Database.load(copy).component("torch").builds


def test_the_reader_keeps_the_platform_as_written_and_binding_refuses_it_with_the_nearest_name(db, write_stack):
    assert read_stack({"system": {"python": "3.12", "platform": "linux-x86-64"}}).system.platform == "linux-x86-64"
    path = write_stack('[system]\npython = "3.12"\nplatform = "linux-x86-64"\n')
    with pytest.raises(StackError) as caught:
        load_stack(path, db)
    assert (caught.value.file, caught.value.line, caught.value.key) == (str(path), 3, "[system] platform")
    assert caught.value.message == ("unknown platform 'linux-x86-64'; did you mean 'linux-x86_64'? (one of "
                                    "linux-x86_64, linux-aarch64, macos-arm64, macos-x86_64, windows-x86_64)")
    path = write_stack('[system]\npython = "3.12"\nplatform = "macos-arm64"\nglibc = "2.35"\n')
    with pytest.raises(StackError, match=r"glibc is for Linux platforms; the platform is macos-arm64") as caught:
        load_stack(path, db)
    assert (caught.value.line, caught.value.key) == (4, "[system] glibc")


def test_a_stack_made_in_python_means_its_platform_as_the_table_says(db):
    system = System(python=Version("3.12"), platform="macos-x86_64")
    assert system.marker_environment()["platform_machine"] == "x86_64"  # before any stack was bound: the bundled table
    assert compat.check(Stack(system), database=db).ok
    with pytest.raises(StackError, match=r"\[system\] platform: unknown platform 'beos' \(one of linux-x86_64, "):
        compat.check(Stack(System(python=Version("3.12"), platform="beos")), database=db)
    with pytest.raises(ValueError, match="unknown platform 'beos'"):
        System(python=Version("3.12"), platform="beos").marker_environment()


def test_a_lock_names_the_tags_the_table_says_fit(db):
    def platforms(name: str) -> set[str]:
        stack = load_stack({"system": {"python": "3.12", "platform": name}}, db)
        return {tag.platform for tag in supported_tags(stack, db)}

    assert {"manylinux2014_aarch64", "manylinux_2_17_aarch64", "linux_aarch64"} <= platforms("linux-aarch64")
    assert "manylinux1_aarch64" not in platforms("linux-aarch64") and "manylinux1_x86_64" in platforms("linux-x86_64")
    assert platforms("windows-x86_64") == {"win_amd64", "any"}
    assert {tag.rsplit("_", 1)[1] for tag in platforms("macos-arm64") - {"any"}} == {"arm64", "universal2"}


TABLE = '''schema = 1
[[platform]]
name = "p"
[platform.markers]
sys_platform = "linux"
platform_system = "Linux"
platform_machine = "x86_64"
os_name = "posix"
source = "s"
[platform.wheels]
manylinux = "x86_64"
legacy = { manylinux2014 = "2.17" }
source = "s"
[platform.hosts]
machines = ["x86_64"]
source = "s"
'''


@pytest.mark.parametrize(("old", "new", "key"), [
    ('os_name = "posix"\n', "", "platform[0].markers.os_name"),
    ('platform_machine = "x86_64"', 'platform_machine = "x 86"', "platform[0].markers.platform_machine"),
    ('platform_machine = "x86_64"', 'platform_machine = 64', "platform[0].markers.platform_machine"),
    ('os_name = "posix"', 'os_name = "posix"\ncolour = "blue"', "platform[0].markers.colour"),
    ('name = "p"', 'name = "P p"', "platform[0].name"),
    ('name = "p"', 'nom = "p"', "platform[0].nom"),
    ('manylinux = "x86_64"\n', "", "platform[0].wheels.legacy"),
    ('manylinux = "x86_64"\nlegacy = { manylinux2014 = "2.17" }\n', "", "platform[0].wheels"),
    ('"2.17"', '"two"', "platform[0].wheels.legacy.manylinux2014"),
    ('{ manylinux2014 = "2.17" }', '{ musl = "1.2" }', "platform[0].wheels.legacy.musl"),
    ('machines = ["x86_64"]', 'machines = []', "platform[0].hosts.machines"),
    ('machines = ["x86_64"]', 'machines = "x86_64"', "platform[0].hosts.machines"),
    ('[platform.wheels]\nmanylinux = "x86_64"\nlegacy = { manylinux2014 = "2.17" }\nsource = "s"\n', "",
     "platform[0].wheels"),
    ('source = "s"\n[platform.wheels]', '[platform.wheels]', "platform[0].markers.source"),
    ("schema = 1\n", "schema = 2\n", "schema"),
    ('[[platform]]', '[platform]', "platform"),
])
def test_a_malformed_platforms_toml_is_one_line_naming_the_file_and_key(tmp_path, old, new, key):
    assert old in TABLE
    path = tmp_path / "platforms.toml"
    path.write_text(TABLE.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(DatabaseError) as caught:
        load_platforms(str(path))
    assert caught.value.file == str(path) and caught.value.key == key, caught.value
    assert "\n" not in str(caught.value)


def test_two_platforms_of_one_name_or_one_host_are_refused(tmp_path):
    path = tmp_path / "platforms.toml"
    path.write_text(TABLE + TABLE.replace("schema = 1\n", ""), encoding="utf-8")
    with pytest.raises(DatabaseError, match=r"platform\[1\]\.name: duplicate platform name 'p'"):
        load_platforms(str(path))
    path.write_text(TABLE + TABLE.replace("schema = 1\n", "").replace('name = "p"', 'name = "q"'), encoding="utf-8")
    with pytest.raises(DatabaseError, match=r"platform\[1\]\.hosts\.machines: the machine 'x86_64' of linux is 'p'"):
        load_platforms(str(path))


def test_a_check_on_a_database_with_a_broken_platform_table_is_exit_2_in_one_line(data, write_stack):
    with_table(data, TABLE.replace('os_name = "posix"\n', ""))
    stack = write_stack('[system]\npython = "3.12"\n')
    result = CliRunner().invoke(cli, ["check", str(stack), "--db", str(data)])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert "platforms.toml" in line and "platform[0].markers.os_name" in line


def test_lint_checks_the_table_s_sources_and_the_gpus_hosts(data):
    with_table(data, (data / "platforms.toml").read_text(encoding="utf-8").replace(
        'source = "python-platform-machine"', 'source = "nowhere"', 1))
    gpus = data / "gpus.toml"
    gpus.write_text(gpus.read_text(encoding="utf-8").replace('host = "linux-aarch64"', 'host = "linux-arm"', 1),
                    encoding="utf-8")
    problems = [str(p) for p in lint_database(Database.load(data))]
    assert any("platforms.toml: platform linux-x86_64.hosts.source: cites unknown source 'nowhere'" in p
               for p in problems), problems
    assert any(".host: unknown platform 'linux-arm'" in p for p in problems), problems


def test_a_database_without_the_file_reads_the_bundled_one(tmp_path, db):
    (tmp_path / "constraints").mkdir()
    (tmp_path / "constraints" / "_sources.toml").write_text("schema = 1\n")
    bare = Database.load(tmp_path)
    assert bare.platforms.names() == db.platforms.names()
    assert load_stack({"system": {"python": "3.12", "platform": "macos-arm64"}}, bare).system.platform == "macos-arm64"


def test_a_stack_made_in_python_with_glibc_on_macos_is_refused_as_the_file_is(db):
    import compat
    from compat.errors import StackError
    from compat.stack import Stack, System

    stack = Stack(system=System(python=Version("3.12"), platform="macos-arm64", glibc=Version("2.35")))
    with pytest.raises(StackError, match="glibc is for Linux platforms"):
        compat.check(stack, database=db)
