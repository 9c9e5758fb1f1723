"""Find and drive a real gfx11 assembler and linker.

Three kinds of toolchain are recognised, tried in this order:

* ``rocm``: ``$ROCM_PATH`` (or ``/opt/rocm``, ``/opt/rocm-*``) ``/llvm/bin/llvm-mc`` + ``ld.lld``;
* ``llvm``: versioned LLVM binaries on ``PATH`` (``llvm-mc-20`` ... ``llvm-mc-16`` with the
  matching ``ld.lld-N``), or plain ``llvm-mc``/``ld.lld``;
* ``zig``: the ``ziglang`` wheel, whose bundled clang has ``-cc1as`` and ``ld.lld``.

Every candidate assembler is probed once per process: it must assemble ``s_endpgm`` for
``-mcpu=gfx1100`` into the gfx11 encoding. That rejects e.g. Debian's default LLVM 14, which
accepts the flag with only a warning and silently assembles for a generic target.

``ISALINT_ASSEMBLER`` (or the ``preferred`` argument of :func:`find_toolchain`) forces a kind
(``rocm``, ``llvm``, ``zig``), ``none`` (behave as if nothing were installed), or names an
``llvm-mc`` (or ``clang``) executable.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

__all__ = [
    "AssembleResult",
    "Diagnostic",
    "InstCheck",
    "MCOperand",
    "Toolchain",
    "ToolchainError",
    "ToolchainNotFound",
    "KINDS",
    "DEFAULT_MCPU",
    "find_toolchain",
    "parse_diagnostics",
]

TRIPLE = "amdgcn-amd-amdhsa"
DEFAULT_MCPU = "gfx1100"
KINDS = ("rocm", "llvm", "zig")
ENV_VAR = "ISALINT_ASSEMBLER"
_LLVM_VERSIONS = tuple(range(22, 15, -1))  # newest first; the probe decides what is usable

# s_endpgm is SOPP opcode 48 on gfx11 (RDNA3 ISA guide, "SOPP"), i.e. 0xbfb00000;
# gfx10 and a generic target encode it as 0xbf810000.
_PROBE_SOURCE = "s_endpgm\ns_delay_alu instid0(VALU_DEP_1)\n"
_PROBE_ENCODING = "[0x00,0x00,0xb0,0xbf]"

_HOW_TO_GET = (
    "get one of: (1) ROCm: install it and set ROCM_PATH (default /opt/rocm); "
    "(2) Debian/Ubuntu: apt-get install llvm-19 lld-19; "
    "(3) pip install ziglang (or pip install isalint[toolchain])"
)

# Opcodes of the RDNA3 ISA guide that older LLVM releases reject as "invalid instruction", with the
# first release that assembles them (v_dual_dot2acc_f32_bf16: llvm-project pull request 118984).
NEWER_LLVM_OPCODES = {"v_dual_dot2acc_f32_bf16": 20}

_ASSEMBLE_TIMEOUT = 600.0
_PROBE_TIMEOUT = 60.0


class ToolchainError(Exception):
    """A toolchain could not be run (missing linker, timeout, ...)."""


class ToolchainNotFound(ToolchainError):
    """No usable gfx1100 assembler/linker. ``str(exc)`` is one line saying how to get one."""

    def __init__(self, reason: str, tried: Sequence[str] = ()):
        self.reason = reason
        self.tried = list(tried)
        msg = f"{reason}; {_HOW_TO_GET}"
        if self.tried:
            msg += f" [rejected: {'; '.join(self.tried)}]"
        super().__init__(msg)


# --------------------------------------------------------------------------- diagnostics


@dataclass(frozen=True)
class Diagnostic:
    """One assembler/linker message. ``line``/``column`` are 1-based, 0 when unknown."""

    path: str
    line: int
    column: int
    severity: str  # "error" | "warning" | "note" | "remark"
    message: str

    def format(self) -> str:
        if self.line > 0:
            return f"{self.path}:{self.line}:{self.column}: {self.severity}: {self.message}"
        return f"{self.path}: {self.severity}: {self.message}"

    def __str__(self) -> str:
        return self.format()


_LOC_RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|note|remark): (?P<msg>.*)$")
_TOOL_RE = re.compile(r"^(?P<path>[^:\s][^:]*): (?P<sev>error|warning|note): (?P<msg>.*)$")
_BARE_RE = re.compile(r"^(?P<sev>error|warning): (?P<msg>.*)$")


def parse_diagnostics(
    stderr: str, *, rename: dict[str, str] | None = None, default_path: str = "<input>"
) -> list[Diagnostic]:
    """Parse LLVM-style ``file:line:col: severity: message`` lines out of tool output.

    Lines without a location (``ld.lld: error: ...``, ``error: ...``) become diagnostics with
    ``line == 0``; for those the tool name is replaced by ``default_path``. The source-line and
    caret lines LLVM prints after each message are skipped; ``>>>`` context lines of ld.lld are
    appended to the previous message. ``rename`` maps paths as printed (e.g. ``<stdin>``) to the
    names callers want shown.
    """
    rename = rename or {}
    out: list[Diagnostic] = []
    for raw in stderr.splitlines():
        line = raw.rstrip()
        m = _LOC_RE.match(line)
        if m:
            path = rename.get(m["path"], m["path"])
            out.append(Diagnostic(path, int(m["line"]), int(m["col"]), m["sev"], m["msg"]))
            continue
        m = _TOOL_RE.match(line) or _BARE_RE.match(line)
        if m:
            out.append(Diagnostic(default_path, 0, 0, m["sev"], m["msg"]))
            continue
        if line.startswith(">>> ") and out:
            last = out[-1]
            out[-1] = Diagnostic(last.path, last.line, last.column, last.severity,
                                 f"{last.message} ({line[4:].strip()})")
    return out


@dataclass
class AssembleResult:
    """Outcome of :meth:`Toolchain.assemble` / :meth:`Toolchain.link` / :meth:`Toolchain.build`.

    ``output`` is the written file when ``ok``; on failure nothing has been written.
    """

    ok: bool
    output: Path | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    stderr: str = ""

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class MCOperand:
    """One operand of LLVM's MCInst: ``kind`` is Reg, Imm, SFPImm, DFPImm, Expr or Inst.

    ``value`` is the text LLVM prints: a register number or name (``487``/``VGPR0``, depending
    on the LLVM build), an integer, or an expression such as ``(.LBB0_2)``.
    """

    kind: str
    value: str


@dataclass(frozen=True)
class InstCheck:
    """The assembler's verdict on one input line of :meth:`Toolchain.show_inst`."""

    line: str
    accepted: bool
    error: str | None = None  # error messages of this line, joined with "; "
    diagnostics: tuple[Diagnostic, ...] = ()  # with path "<stdin>" and the line's 1-based index
    text: str | None = None  # LLVM's canonical spelling, e.g. "v_add_f32_e32 v0, v1, v2"
    encoding: bytes | None = None  # fixup bytes (branch targets, symbols) are 0, see has_fixup
    opcode: str | None = None  # MCInst opcode name, e.g. "V_ADD_F32_e32_gfx11"
    operands: tuple[MCOperand, ...] = ()
    has_fixup: bool = False

    @property
    def size(self) -> int:
        return len(self.encoding) if self.encoding is not None else 0


# --------------------------------------------------------------------------- toolchain


_probe_cache: dict[tuple[str, ...], tuple[bool, str]] = {}


@dataclass
class Toolchain:
    """A gfx11-capable assembler (+ linker).

    ``assembler`` is the argv prefix of the assembler; ``flavor`` says how to talk to it:
    ``"llvm-mc"`` or ``"cc1as"`` (clang's integrated assembler, ``clang -cc1as``).
    """

    name: str  # "rocm" | "llvm" | "zig" | "path"
    assembler: tuple[str, ...]
    flavor: str
    linker: tuple[str, ...] | None
    detail: str = ""

    # -- description -------------------------------------------------------------------
    def describe(self) -> str:
        asm = " ".join(self.assembler)
        lnk = " ".join(self.linker) if self.linker else "no linker"
        extra = f", {self.detail}" if self.detail else ""
        return f"{self.name} toolchain (assembler: {asm}; linker: {lnk}{extra})"

    def __str__(self) -> str:
        return self.describe()

    # -- command lines ------------------------------------------------------------------
    def _asm_argv(self, mcpu: str, inp: str, out: str, *, filetype: str, show: bool = False,
                  mattr: str | None = None) -> list[str]:
        argv = list(self.assembler)
        if self.flavor == "llvm-mc":
            argv += [f"-triple={TRIPLE}", f"-mcpu={mcpu}", f"-filetype={filetype}"]
            if mattr:
                argv.append(f"-mattr={mattr}")
            if show:
                argv += ["-show-encoding", "-show-inst"]
            argv += ["-o", out, inp]
        else:
            argv += ["-cc1as", "-triple", TRIPLE, "-target-cpu", mcpu, "-filetype", filetype]
            for feature in (mattr.split(",") if mattr else ()):
                argv += ["-target-feature", feature]
            if show:
                argv += ["-show-encoding", "-show-inst"]
            argv += ["-o", out, inp]
        return argv

    # -- probing ------------------------------------------------------------------------
    def knows_gfx1100(self) -> bool:
        """True when the assembler produces gfx11 encodings (cached per process)."""
        return self.probe()[0]

    def probe(self) -> tuple[bool, str]:
        """(usable, reason). Runs the assembler once per process per argv prefix."""
        key = (self.flavor, *self.assembler)
        if key not in _probe_cache:
            _probe_cache[key] = self._run_probe()
        return _probe_cache[key]

    def _run_probe(self) -> tuple[bool, str]:
        argv = self._asm_argv(DEFAULT_MCPU, "-", "-", filetype="asm", show=True)
        try:
            p = subprocess.run(argv, input=_PROBE_SOURCE, capture_output=True, text=True,
                               timeout=_PROBE_TIMEOUT)
        except (OSError, subprocess.SubprocessError) as exc:
            return False, f"cannot run: {exc}"
        if "not a recognized processor" in p.stderr:
            return False, "does not know gfx1100"
        if p.returncode != 0:
            first = next((ln for ln in p.stderr.splitlines() if ln.strip()), f"exit {p.returncode}")
            return False, f"probe failed: {first.strip()}"
        if _PROBE_ENCODING not in p.stdout:
            return False, "does not produce gfx11 encodings"
        return True, "ok"

    # -- assembling ---------------------------------------------------------------------
    def assemble(
        self,
        source: str | os.PathLike[str],
        obj_path: str | os.PathLike[str],
        *,
        mcpu: str | None = None,
        source_name: str | None = None,
        timeout: float = _ASSEMBLE_TIMEOUT,
    ) -> AssembleResult:
        """Assemble ``source`` into the relocatable object ``obj_path``.

        ``source`` is a path (``os.PathLike``, or a ``str`` naming an existing file and holding
        no newline) or assembly text. Diagnostics of text input are reported against
        ``source_name`` (default ``<input>``). ``mcpu`` defaults to the target named by the
        source's ``.amdgcn_target`` directive, else gfx1100. The object is written atomically:
        on failure ``obj_path`` is left untouched. Raises ``OSError`` when a source path
        cannot be read.
        """
        path, text = _split_source(source)
        if path is not None:
            text = path.read_text(encoding="utf-8", errors="replace")
            shown = source_name or str(path)
        else:
            shown = source_name or "<input>"
        mcpu = mcpu or _sniff_mcpu(text) or DEFAULT_MCPU
        # wave64 code assembles only in wave64 mode, which the file says by its kernel descriptor
        mattr = "+wavefrontsize64" if _WAVE64.search(text) else None
        obj_path = Path(obj_path)
        tmp = _temp_beside(obj_path, ".o")
        try:
            inp = str(path) if path is not None else "-"
            argv = self._asm_argv(mcpu, inp, str(tmp), filetype="obj", mattr=mattr)
            res = self._run(argv, None if path is not None else text, timeout,
                            rename={"<stdin>": shown, str(path): shown} if path else {"<stdin>": shown},
                            default_path=shown)
            if res.ok and res.errors:
                res.ok = False
            if not res.ok:
                res.diagnostics = [self._explain(d, text) for d in res.diagnostics]
            if res.ok:
                os.replace(tmp, obj_path)
                res.output = obj_path
            return res
        finally:
            _unlink(tmp)

    def _explain(self, diag: Diagnostic, text: str | None) -> Diagnostic:
        """Say so when an error comes from an opcode the hardware has but this LLVM predates."""
        if diag.severity != "error" or diag.line <= 0 or not text or "invalid instruction" not in diag.message:
            return diag
        lines = text.splitlines()
        source = lines[diag.line - 1] if diag.line <= len(lines) else ""
        for opcode, version in NEWER_LLVM_OPCODES.items():
            if opcode in source:
                tool = Path(self.assembler[-1] if self.flavor == "cc1as" else self.assembler[0]).name
                hint = (f"{opcode} is a gfx11 opcode of the RDNA3 ISA guide, but this assembler ({tool}) is too "
                        f"old to assemble it: LLVM {version} or newer does (e.g. pip install ziglang)")
                return replace(diag, message=f"{diag.message.split(',')[0]}: {hint}")
        return diag

    def link(
        self,
        obj_path: str | os.PathLike[str],
        hsaco_path: str | os.PathLike[str],
        *,
        timeout: float = _ASSEMBLE_TIMEOUT,
    ) -> AssembleResult:
        """Link one object into a code object (``.hsaco``, a shared ELF), atomically."""
        if not self.linker:
            raise ToolchainError(f"{self.describe()}: no ld.lld to link with")
        hsaco_path = Path(hsaco_path)
        tmp = _temp_beside(hsaco_path, ".hsaco")
        try:
            argv = [*self.linker, "-shared", "--no-undefined", str(obj_path), "-o", str(tmp)]
            res = self._run(argv, None, timeout, rename={}, default_path=str(obj_path))
            if res.ok:
                os.replace(tmp, hsaco_path)
                res.output = hsaco_path
            return res
        finally:
            _unlink(tmp)

    def build(
        self,
        source: str | os.PathLike[str],
        hsaco_path: str | os.PathLike[str],
        *,
        mcpu: str | None = None,
        source_name: str | None = None,
    ) -> AssembleResult:
        """Assemble then link ``source`` into ``hsaco_path`` (nothing written on failure)."""
        with tempfile.TemporaryDirectory(prefix="isalint-") as td:
            obj = Path(td) / "kernel.o"
            res = self.assemble(source, obj, mcpu=mcpu, source_name=source_name)
            if not res.ok:
                return res
            lres = self.link(obj, hsaco_path)
            lres.diagnostics = res.diagnostics + lres.diagnostics
            return lres

    def _run(self, argv: list[str], stdin: str | None, timeout: float, *, rename: dict[str, str],
             default_path: str) -> AssembleResult:
        try:
            io = {"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **io)
        except subprocess.TimeoutExpired:
            d = Diagnostic(default_path, 0, 0, "error", f"{argv[0]} timed out after {timeout:.0f}s")
            return AssembleResult(False, None, [d], argv, "")
        except OSError as exc:
            raise ToolchainError(f"cannot run {argv[0]}: {exc}") from exc
        diags = parse_diagnostics(p.stderr, rename=rename, default_path=default_path)
        ok = p.returncode == 0
        if not ok and not any(d.severity == "error" for d in diags):
            first = next((ln.strip() for ln in p.stderr.splitlines() if ln.strip()),
                         f"{Path(argv[0]).name} exited with status {p.returncode}")
            diags.append(Diagnostic(default_path, 0, 0, "error", first))
        return AssembleResult(ok, None, diags, argv, p.stderr)

    # -- the oracle ---------------------------------------------------------------------
    def show_inst(self, lines: Sequence[str], *, mcpu: str = DEFAULT_MCPU, mattr: str | None = None,
                  timeout: float = _ASSEMBLE_TIMEOUT) -> list[InstCheck]:
        """Ask the assembler about many instruction lines at once (one subprocess).

        Returns one :class:`InstCheck` per input line, in order (``mattr``: target features such
        as ``+wavefrontsize64``). Lines are independent:
        a rejected line does not affect the others. Labels and directives are allowed (they
        are "accepted" with no encoding); a line must not contain a newline.
        """
        lines = list(lines)
        if not lines:
            return []
        for i, ln in enumerate(lines):
            if "\n" in ln or "\r" in ln:
                raise ValueError(f"show_inst line {i + 1} contains a newline")
        # A marker label before each line lets us cut the printed output back into
        # per-line pieces: stdin line 2*i+1 is the marker of input i, line 2*i+2 is input i.
        buf = []
        for i, ln in enumerate(lines):
            buf.append(f"{_MARK}{i}:")
            buf.append(ln)
        src = "\n".join(buf) + "\n"
        argv = self._asm_argv(mcpu, "-", "-", filetype="asm", show=True, mattr=mattr)
        try:
            p = subprocess.run(argv, input=src, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.SubprocessError) as exc:
            raise ToolchainError(f"cannot run {argv[0]}: {exc}") from exc

        per_line: list[list[Diagnostic]] = [[] for _ in lines]
        stray: list[Diagnostic] = []
        for d in parse_diagnostics(p.stderr, default_path="<stdin>"):
            if d.path == "<stdin>" and d.line >= 2 and d.line % 2 == 0 and d.line // 2 - 1 < len(lines):
                idx = d.line // 2 - 1
                per_line[idx].append(Diagnostic("<stdin>", idx + 1, d.column, d.severity, d.message))
            else:
                stray.append(d)
        if stray and p.returncode != 0 and not any(per_line):
            raise ToolchainError("assembler failed: " + "; ".join(d.format() for d in stray))

        chunks = _split_marked_output(p.stdout, len(lines))
        out: list[InstCheck] = []
        for i, ln in enumerate(lines):
            diags = tuple(per_line[i])
            errs = [d.message for d in diags if d.severity == "error"]
            if errs:
                out.append(InstCheck(ln, False, "; ".join(errs), diags))
                continue
            out.append(_parse_chunk(ln, chunks[i], diags))
        return out


_WAVE64 = re.compile(r"^[ \t]*\.amdhsa_wavefront_size32[ \t]+0\b", re.M)
_MARK = "__isalint_line_"
_MARK_RE = re.compile(rf"^{_MARK}(\d+):\s*$")
_ENC_RE = re.compile(r"^\s*(?P<text>\S.*?)\s*;\s*encoding:\s*\[(?P<bytes>[^\]]*)\]")
_MCINST_RE = re.compile(r"<MCInst #\d+ (?P<op>\S+?)>?$")
_MCOP_RE = re.compile(r"^<MCOperand (?P<kind>\w+):(?P<val>.*?)>+$")


def _split_marked_output(stdout: str, n: int) -> list[list[str]]:
    chunks: list[list[str]] = [[] for _ in range(n)]
    cur: list[str] | None = None
    for raw in stdout.splitlines():
        m = _MARK_RE.match(raw.strip())
        if m:
            idx = int(m.group(1))
            cur = chunks[idx] if idx < n else None
            continue
        if cur is not None:
            cur.append(raw)
    return chunks


def _parse_encoding(text: str) -> tuple[bytes, bool]:
    vals = []
    fixup = False
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            continue
        if tok.startswith("0x"):
            vals.append(int(tok, 16))
        elif tok.startswith("0b"):
            bits = tok[2:]
            if not set(bits) <= {"0", "1"}:
                fixup = True
                bits = "".join(c if c in "01" else "0" for c in bits)
            vals.append(int(bits, 2))
        else:  # a symbolic fixup byte such as "A"
            fixup = True
            vals.append(0)
    return bytes(vals), fixup


def _parse_chunk(line: str, chunk: list[str], diags: tuple[Diagnostic, ...]) -> InstCheck:
    text = enc = opcode = None
    fixup = False
    ops: list[MCOperand] = []
    in_inst = False
    for raw in chunk:
        s = raw.strip()
        if text is None:
            m = _ENC_RE.match(raw)
            if m:
                text = m["text"]
                enc, fixup = _parse_encoding(m["bytes"])
            continue
        if not s.startswith(";"):
            if in_inst or opcode is not None:
                break  # a second statement; only the first belongs to this line
            continue
        body = s[1:].strip()
        if body.startswith("fixup "):
            fixup = True
            continue
        m = _MCINST_RE.match(body)
        if m and opcode is None:
            opcode = m["op"]
            in_inst = not body.endswith(">")
            continue
        m = _MCOP_RE.match(body)
        if m and in_inst:
            ops.append(MCOperand(m["kind"], m["val"]))
            if body.endswith(">>"):
                in_inst = False
    return InstCheck(line, True, None, diags, text, enc, opcode, tuple(ops), fixup)


# --------------------------------------------------------------------------- helpers


def _split_source(source: str | os.PathLike[str]) -> tuple[Path | None, str | None]:
    if isinstance(source, os.PathLike):
        return Path(source), None
    if "\n" not in source and source and Path(source).is_file():
        return Path(source), None
    return None, source


_TARGET_RE = re.compile(r'^\s*\.amdgcn_target\s+"[^"]*--(gfx[0-9a-z]+)', re.M)


def _sniff_mcpu(text: str | None) -> str | None:
    if not text:
        return None
    m = _TARGET_RE.search(text)
    return m.group(1) if m else None


def _temp_beside(target: Path, suffix: str) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix + ".tmp",
                                dir=str(target.parent) if str(target.parent) else ".")
    os.close(fd)
    return Path(name)


def _unlink(p: Path) -> None:
    try:
        p.unlink()
    except FileNotFoundError:
        pass


# --------------------------------------------------------------------------- discovery


def _which(name: str) -> str | None:
    return shutil.which(name)


def _rocm_roots() -> list[str]:
    roots: list[str] = []
    env = os.environ.get("ROCM_PATH")
    if env:
        roots.append(env)
    roots.append("/opt/rocm")
    roots += sorted(glob.glob("/opt/rocm-*"), reverse=True)
    return roots


def _rocm_candidates() -> Iterable[Toolchain]:
    seen = set()
    for root in _rocm_roots():
        bindir = Path(root) / "llvm" / "bin"
        mc, lld = bindir / "llvm-mc", bindir / "ld.lld"
        key = str(mc.resolve()) if mc.exists() else None
        if key is None or key in seen:
            continue
        seen.add(key)
        yield Toolchain("rocm", (str(mc),), "llvm-mc", (str(lld),) if lld.exists() else None,
                        detail=f"ROCm at {root}")


def _llvm_candidates() -> Iterable[Toolchain]:
    for v in _LLVM_VERSIONS:
        mc = _which(f"llvm-mc-{v}")
        if mc:
            yield Toolchain("llvm", (mc,), "llvm-mc", _find_lld(str(v)), detail=f"LLVM {v}")
    mc = _which("llvm-mc")
    if mc:
        yield Toolchain("llvm", (mc,), "llvm-mc", _find_lld(None, near=mc), detail="LLVM")


def _find_lld(version: str | None, near: str | None = None) -> tuple[str, ...] | None:
    if near:
        sib = Path(near).parent / "ld.lld"
        if sib.exists():
            return (str(sib),)
    names = [f"ld.lld-{version}"] if version else []
    names += [f"ld.lld-{v}" for v in _LLVM_VERSIONS] + ["ld.lld"]
    for name in names:
        p = _which(name)
        if p:
            return (p,)
    return None


def _zig_available() -> bool:
    try:
        import importlib.util
        return importlib.util.find_spec("ziglang") is not None
    except (ImportError, ValueError):
        return False


def _zig_version() -> str:
    try:
        from importlib.metadata import version
        return version("ziglang")
    except Exception:  # metadata missing: still usable, just undescribed
        return "?"


def _zig_candidates() -> Iterable[Toolchain]:
    if _zig_available():
        base = (sys.executable, "-m", "ziglang")
        yield Toolchain("zig", (*base, "clang"), "cc1as", (*base, "ld.lld"),
                        detail=f"ziglang {_zig_version()}")


def _path_candidate(path: str) -> Toolchain:
    exe = path if os.sep in path else (_which(path) or path)
    base = Path(exe).name
    m = re.search(r"-(\d+)$", base)
    flavor = "cc1as" if base.startswith("clang") else "llvm-mc"
    return Toolchain("path", (exe,), flavor, _find_lld(m.group(1) if m else None, near=exe),
                     detail=f"from {ENV_VAR}" if os.environ.get(ENV_VAR) == path else "")


_DISCOVERERS = {"rocm": _rocm_candidates, "llvm": _llvm_candidates, "zig": _zig_candidates}


def find_toolchain(preferred: str | None = None, *, need_linker: bool = True) -> Toolchain:
    """Return the first usable gfx1100 toolchain.

    ``preferred`` (else ``$ISALINT_ASSEMBLER``) may be ``"rocm"``, ``"llvm"``, ``"zig"``,
    ``"auto"``/empty (try all, in that order), ``"none"`` (find nothing) or a path to an
    ``llvm-mc``/``clang`` executable. With ``need_linker`` (the default) a candidate without
    ``ld.lld`` is skipped. Raises :class:`ToolchainNotFound` (one-line message listing the
    three ways to get a toolchain) when nothing fits.
    """
    choice = preferred if preferred is not None else os.environ.get(ENV_VAR, "")
    choice = choice.strip()
    low = choice.lower()
    forced = f"{ENV_VAR}={choice}" if preferred is None else f"toolchain '{choice}'"
    if low == "none":
        raise ToolchainNotFound(f"no gfx1100 assembler ({forced})")
    if low in ("", "auto"):
        kinds: list = [_DISCOVERERS[k] for k in KINDS]
        what = "no gfx1100-capable assembler and linker found"
    elif low in _DISCOVERERS:
        kinds = [_DISCOVERERS[low]]
        what = f"no usable {low} toolchain found ({forced})"
    elif os.sep in choice or Path(choice).name.startswith(("llvm-mc", "clang")) or _which(choice):
        if not (os.path.exists(choice) or _which(choice)):
            raise ToolchainNotFound(f"{forced}: no such executable")
        kinds = [lambda: iter([_path_candidate(choice)])]
        what = f"{forced} is not usable"
    else:
        raise ToolchainNotFound(
            f"unknown {forced}: expected one of auto, {', '.join(KINDS)}, none or a path to llvm-mc")

    tried: list[str] = []
    for disc in kinds:
        for tc in disc():
            ok, why = tc.probe()
            label = " ".join(tc.assembler)
            if not ok:
                tried.append(f"{label}: {why}")
                continue
            if need_linker and not tc.linker:
                tried.append(f"{label}: no ld.lld beside it")
                continue
            return tc
    raise ToolchainNotFound(what, tried)
