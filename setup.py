"""Which packages the wheel holds, found rather than listed: every folder of ``isalint/`` (with or
without an ``__init__.py``) and ``rules/``, which sits at the top of the repository and installs as
``isalint.rules``. The project's metadata is in ``pyproject.toml``."""
from setuptools import find_namespace_packages, setup

EXCLUDE = ["*.__pycache__", "*.__pycache__.*"]
packages = find_namespace_packages(include=["isalint", "isalint.*"], exclude=EXCLUDE)
packages += ["isalint." + name for name in find_namespace_packages(include=["rules", "rules.*"], exclude=EXCLUDE)]

setup(packages=packages, package_dir={"isalint": "isalint", "isalint.rules": "rules"})
