"""``isalint server`` on the command line: listed, and saying how to install its protocol library
when it is missing (it is an optional extra)."""
from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_server_is_a_command():
    out = subprocess.run([sys.executable, "-m", "isalint", "--help"], capture_output=True, text=True)
    assert "server" in out.stdout
    out = subprocess.run([sys.executable, "-m", "isalint", "server", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "language server" in out.stdout


def test_without_pygls_it_says_how_to_install_it(tmp_path):
    # a Python where the protocol library cannot be imported: a finder that hides it
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pygls', 'lsprotocol'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n")
    env = {"PYTHONPATH": f"{tmp_path}:{REPO}", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "isalint", "server"], capture_output=True, text=True, env=env,
                         stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == "isalint: isalint server needs pygls 2 and lsprotocol: pip install 'isalint[server]'"
    assert out.stdout == ""
