"""What a non-editable install (``pip install .``, the pre-commit hook's environment) gets: the wheel
is built from this checkout and every module of ``isalint/`` and ``rules/`` is imported from it, in a
Python that cannot see the source tree (no site hooks: the editable install's finder is not loaded)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest
from conftest import REPO


def source_modules() -> set[str]:
    """Every module of the source tree, by the name it installs under."""
    names = set()
    for root, prefix in ((REPO / "isalint", "isalint"), (REPO / "rules", "isalint.rules")):
        for path in root.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            names.add(".".join([prefix, *parts]))
    return names


def data_files() -> set[str]:
    """Every data file a module of the source tree may read, by its path inside the wheel."""
    out = set()
    for root, prefix in ((REPO / "isalint", "isalint"), (REPO / "rules", "isalint/rules")):
        for path in root.rglob("*"):
            if path.is_file() and path.suffix in (".json", ".txt", ".md", ".yaml"):
                out.add(f"{prefix}/{path.relative_to(root).as_posix()}")
    return out


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # From a copy without build products: setuptools would otherwise reuse an earlier build/.
    source = tmp_path_factory.mktemp("source") / "isalint"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".isalint_cache", ".hypothesis",
        ".pytest_cache", ".benchmarks"))
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        capture_output=True, text=True,
    )
    if build.returncode != 0:
        # Without the build backend in this environment, build it the way pip install . does.
        build = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
            capture_output=True, text=True,
        )
    if build.returncode != 0 and "Could not find a version" in build.stderr + build.stdout:
        pytest.skip("no build backend available to build the wheel")
    assert build.returncode == 0, build.stderr
    (path,) = out.glob("isalint-*.whl")
    return path


def test_the_wheel_holds_every_module_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {n[:-3].replace("/", ".").removesuffix(".__init__") for n in names if n.endswith(".py")}
    assert source_modules() - modules == set()
    assert data_files() - names == set()


def test_every_module_imports_from_the_installed_wheel(wheel, tmp_path):
    root = tmp_path / "installed"
    zipfile.ZipFile(wheel).extractall(root)
    # The dependencies' site-packages on the path, but not as a site directory: its .pth files (the
    # editable install's finder among them) are not run, so `isalint` can only come from the wheel.
    path = os.pathsep.join([str(root), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    script = (
        "import importlib, json, sys\n"
        "names = json.loads(sys.stdin.read())\n"
        "failed = {}\n"
        "for name in sorted(n for n in names if not n.endswith('.__main__')):\n"
        "    try:\n"
        "        module = importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed[name] = f'{type(exc).__name__}: {exc}'\n"
        "import isalint\n"
        "print(json.dumps({'from': isalint.__file__, 'failed': failed}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = path
    done = subprocess.run(
        [sys.executable, "-S", "-c", script], input=json.dumps(sorted(source_modules())),
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["from"].startswith(str(root))
    assert result["failed"] == {}


def test_the_installed_command_runs_a_fix_pass_that_needs_every_package(wheel, tmp_path):
    """``optimize`` reaches the affine evaluator (batch-gmem), the emulator and the estimate."""
    root = tmp_path / "installed"
    zipfile.ZipFile(wheel).extractall(root)
    path = os.pathsep.join([str(root), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = path
    kernel = REPO / "fixtures" / "kernels" / "gemm_lds_padded.s"
    done = subprocess.run(
        [sys.executable, "-S", "-c", "import sys; from isalint.cli import main; sys.exit(main())",
         "optimize", str(kernel), "-o", str(tmp_path / "out.s"), "--no-validate", "--steps", "batch-gmem"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert "ModuleNotFoundError" not in done.stderr + done.stdout
    assert done.returncode in (0, 1), done.stderr
