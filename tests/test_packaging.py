"""What a non-editable install (``pip install .``, the pre-commit hook's environment) gets: every
package of the source tree, and the data files its modules read."""
from __future__ import annotations

import pytest
from conftest import REPO

tomllib = pytest.importorskip("tomllib")


def _setuptools():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_is_installed():
    listed = set(_setuptools()["packages"])
    found = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "isalint").rglob("__init__.py")}
    assert found - listed == set()


def test_every_data_file_is_installed():
    import fnmatch

    data = _setuptools()["package-data"]
    for pkg_dir in (REPO / "isalint").rglob("__init__.py"):
        package = ".".join(pkg_dir.parent.relative_to(REPO).parts)
        for f in pkg_dir.parent.iterdir():
            if f.is_file() and f.suffix in (".json", ".txt", ".md", ".yaml"):
                assert any(fnmatch.fnmatch(f.name, pat) for pat in data.get(package, [])), f
