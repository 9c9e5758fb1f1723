"""isalint on LLVM's own gfx11 MC tests: every instruction line LLVM 19 accepts, in each configuration
its tests assemble it.

    python benchmarks/bench_llvm_mc_tests.py [MC_DIR] [--table FILE.md] [--llvm-mc llvm-mc-19]
        [--only GLOB] [--no-check] [--no-disassembler] [--misses N] [--label TEXT]

``MC_DIR`` (or the environment variable ``ISALINT_LLVM_MC_TESTS``) is LLVM's ``test/MC`` directory
(holding ``AMDGPU/*.s`` and ``Disassembler/AMDGPU/*.txt``) or its ``AMDGPU`` folder; the files are
read where they are, never copied. Without them (or without ``llvm-mc``) the benchmark says so and
exits 0.

Assembler tests (``AMDGPU/*.s``): a file counts when one of its RUN lines runs ``llvm-mc`` for a
gfx11 processor (``-mcpu=gfx11..``, not ``-disassemble``). Each such RUN line gives a configuration:
its processor and ``-mattr`` (``+wavefrontsize64``, ``+real-true16`` / ``-real-true16``...). Per
configuration, the file's instruction lines (comments, CHECK lines, labels and directives dropped)
are assembled in one ``llvm-mc -show-encoding`` batch; llvm-mc reports each line it rejects with its
line number and goes on, so the lines it accepts are the others, and its output gives, in order, the
canonical text and bytes of each. The accepted lines are then

* parsed and modelled by isalint in the matching mode (wave64 for ``+wavefrontsize64``): a line the
  model cannot match is a PARSE001 (``read`` counts the others); the registers of the model's
  operands are compared with those LLVM's disassembly of the line's bytes names (``registers
  agree``: LLVM's register widths; for image atomics, which LLVM's disassembler writes by their
  first registers, the assembler's echo of the line);
* checked with every rule (``isalint check``'s path, :func:`isalint.lint.files.check_text`): an
  exception there is a traceback;
* decoded from LLVM's bytes by isalint's own decoder (:mod:`isalint.binary.decoder`), whose text is
  compared with the text ``llvm-mc -disassemble`` gives the same bytes in the same configuration
  (``decoded`` counts the equal ones; the assembler's own echo of a line keeps the spelling it was
  written in, ``off`` or ``null``, so LLVM's disassembly is the reference; lines whose bytes hold an
  unresolved fixup, a branch to a label, are not compared).

Disassembler tests (``Disassembler/AMDGPU/*.txt``): per gfx11 RUN configuration, ``llvm-mc
-disassemble -show-encoding`` prints each instruction with its bytes; isalint's decoder decodes the
same bytes and the texts are compared, and compared again with the file's own CHECK line for those
bytes under a FileCheck prefix of the configuration, where one holds the whole text.

In a ``+real-true16`` configuration LLVM writes register halves (``v1.l``): there the decoder runs in
its ``true16`` syntax, and those rows are counted apart.

The table is printed and written to ``--table`` (default ``benchmarks/results/llvm_mc_tests.md``):
per class of test file (the name without its ``gfx11_asm_`` prefix and ``_err``/``-fake16``/...
suffixes), then the lines isalint refuses (first ones of each class), the register disagreements,
the tracebacks and the decoder's differences by opcode.
"""
from __future__ import annotations

import argparse
import datetime
import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

_ERROR = re.compile(r":(\d+):\d+: error:")
_ENCODED = re.compile(r"^\s*(.*?)\s*; encoding: \[([^\]]*)\]")
_LABEL = re.compile(r"^[\w.$\"@-]+:\s*$")
_FIRST = re.compile(r"^([A-Za-z_][\w.]*)(\s|$)")


def run_lines(text: str) -> list[str]:
    """The file's RUN commands, continuation lines joined."""
    out, cur = [], None
    for line in text.splitlines():
        m = re.match(r"^\s*(?://|;|#)\s*RUN:\s?(.*)$", line)
        if not m:
            if cur is not None:
                out.append(cur)
                cur = None
            continue
        part = m.group(1).rstrip()
        cont = part.endswith("\\")
        part = part[:-1] if cont else part
        cur = part if cur is None else cur + " " + part.strip()
        if not cont:
            out.append(cur)
            cur = None
    if cur is not None:
        out.append(cur)
    return out


def configurations(text: str, disassemble: bool) -> list[tuple[str, str, tuple[str, ...]]]:
    """(triple, processor, features) of each RUN line that runs llvm-mc for gfx11, in order, once each."""
    seen = []
    for run in run_lines(text):
        for segment in run.split("|"):
            try:
                words = shlex.split(segment.replace("%s", "FILE"))
            except ValueError:
                words = segment.split()
            if "llvm-mc" not in words:
                continue
            triple, cpu, attrs, dis = "amdgcn", None, [], False
            for k, w in enumerate(words):
                nxt = words[k + 1] if k + 1 < len(words) else ""
                for flag in ("-triple", "--triple", "-mcpu", "--mcpu", "-mattr", "--mattr"):
                    if w == flag:
                        value = nxt
                    elif w.startswith(flag + "="):
                        value = w.split("=", 1)[1]
                    else:
                        continue
                    name = flag.lstrip("-")
                    if name == "triple":
                        triple = value
                    elif name == "mcpu":
                        cpu = value
                    else:
                        attrs += [a for a in value.split(",") if a]
                    break
                if w in ("-disassemble", "--disassemble"):
                    dis = True
            if cpu and cpu.startswith("gfx11") and dis == disassemble:
                key = (triple, cpu, tuple(attrs))
                if key not in seen:
                    seen.append(key)
    return seen


_PREFIXES = re.compile(r"--?check-prefix(?:es)?[= ]([\w,-]+)")
_CHECK = re.compile(r"^\s*(?:#|//|;)\s*([\w-]+?)(?:-NEXT|-SAME)?:\s*(.*?)\s*;\s*encoding:\s*\[([^\]]*)\]")


def check_lines(text: str) -> dict[tuple[str, tuple[str, ...]], set[str]]:
    """FileCheck prefixes of each disassembler RUN configuration, and the texts the file's CHECK lines
    give each encoding per prefix: ({config: prefixes}, {(prefix, bytes): text})."""
    prefixes: dict[tuple, set[str]] = {}
    for run in run_lines(text):
        if "-disassemble" not in run:
            continue
        for config in configurations("// RUN: " + run, disassemble=True):
            prefixes.setdefault(config, set()).update(
                p for m in _PREFIXES.findall(run) for p in m.split(",") if p)
            if not _PREFIXES.search(run):
                prefixes[config].add("CHECK")
    checks = {}
    for line in text.splitlines():
        m = _CHECK.match(line)
        if m and "{{" not in m.group(2):
            try:
                code = bytes(int(b, 16) for b in m.group(3).split(","))
            except ValueError:
                continue
            checks[m.group(1), code] = " ".join(m.group(2).split())
    return prefixes, checks


def feature(attrs: tuple[str, ...], name: str) -> bool | None:
    """The last setting of feature ``name`` in ``attrs`` (True for +, False for -), None when unset."""
    value = None
    for a in attrs:
        if a[1:].lower() == name.lower():
            value = a[0] == "+"
    return value


def wave64(attrs) -> bool:
    return bool(feature(attrs, "wavefrontsize64")) and not feature(attrs, "wavefrontsize32")


def real_true16(attrs) -> bool:
    return bool(feature(attrs, "real-true16"))


def strip_comment(line: str) -> str:
    for mark in ("//", ";"):
        k = line.find(mark)
        if k >= 0:
            line = line[:k]
    return line.strip()


def instruction_lines(text: str) -> list[str]:
    """The file's instruction lines, comments removed: no directive, label, symbol assignment or blank."""
    out = []
    for raw in text.splitlines():
        line = strip_comment(raw)
        if not line or line.startswith(".") or _LABEL.match(line):
            continue
        m = _FIRST.match(line)
        if m is None or re.match(r"^[\w.$]+\s*=", line):
            continue
        out.append(line)
    return out


def llvm_assemble(mc: str, lines: list[str], triple: str, cpu: str, attrs, tmp: Path):
    """(rejected line numbers, [(text, bytes or None)] for the accepted lines in order) of one batch."""
    src = tmp / "lines.s"
    src.write_text("\n".join(lines) + "\n")
    cmd = [mc, f"-triple={triple}", f"-mcpu={cpu}", "-show-encoding", str(src)]
    if attrs:
        cmd.insert(3, "-mattr=" + ",".join(attrs))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    rejected = {int(n) for n in _ERROR.findall(r.stderr)}
    return rejected, _encoded(r.stdout)


def _encoded(stdout: str) -> list[tuple[str, bytes | None]]:
    out = []
    for line in stdout.splitlines():
        m = _ENCODED.match(line)
        if not m:
            continue
        text = " ".join(m.group(1).split())
        raw = [b.strip() for b in m.group(2).split(",") if b.strip()]
        try:
            code = bytes(int(b, 16) for b in raw)
        except ValueError:
            code = None  # a fixup: bytes the assembler leaves to the linker
        out.append((text, code))
    return out


def llvm_disassemble(mc: str, codes: list[bytes], triple: str, cpu: str, attrs, tmp: Path) -> dict[bytes, str]:
    """LLVM's text of each of these instructions' bytes, disassembled in one batch."""
    if not codes:
        return {}
    src = tmp / "bytes.txt"
    src.write_text("".join(",".join(f"0x{b:02x}" for b in code) + "\n" for code in dict.fromkeys(codes)))
    cmd = [mc, f"-triple={triple}", f"-mcpu={cpu}", "-disassemble", "-show-encoding", str(src)]
    if attrs:
        cmd.insert(3, "-mattr=" + ",".join(attrs))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return {code: text for text, code in _encoded(r.stdout) if code is not None}


def decode_text(decoder, code: bytes) -> str:
    from isalint.binary.decoder import UnknownEncoding

    try:
        size, text, target = decoder.decode(code, 0)
    except UnknownEncoding as exc:
        return f"<unknown: {exc}>"
    except Exception as exc:  # noqa: BLE001 - a decoder bug is counted, not fatal
        return f"<traceback: {type(exc).__name__}: {exc}>"
    if target is not None:  # LLVM writes a branch to no label as its 16-bit word offset
        text = text.replace("{}", str(((target - 4) // 4) & 0xFFFF))
    if size != len(code):
        return f"<{size} bytes of {len(code)}>: {text}"
    return " ".join(text.split())


_REG_RANGE = re.compile(r"\b(v|s|ttmp)\[(\d+):(\d+)\]")
_REG_ONE = re.compile(r"\b(v|s|ttmp)(\d+)\b")


def named_registers(text: str) -> set[str]:
    """The VGPRs, SGPRs and trap temporaries an instruction's text names (``v[1:2]`` is v1 and v2;
    a 16-bit half ``v1.l`` is v1)."""
    ops = text.split(None, 1)[1] if " " in text else ""
    out = set()
    for k, stmt in enumerate(ops.split("::")):
        if k and " " in stmt.strip():  # the second half of a VOPD pair: past its mnemonic
            stmt = stmt.strip().split(None, 1)[1]
        for kind, lo, hi in _REG_RANGE.findall(stmt):
            out.update(f"{kind}{r}" for r in range(int(lo), int(hi) + 1))
        out.update(f"{k}{n}" for k, n in _REG_ONE.findall(_REG_RANGE.sub("", stmt)))
    return out


def model_registers(ins) -> set[str]:
    """The VGPRs, SGPRs and trap temporaries isalint's model gives an instruction's written operands."""
    return {r for stmt in ins.slots for slot in stmt for r in slot.regs if _REG_ONE.fullmatch(r)}


def isalint_lines(lines: list[str], is64: bool, check: bool):
    """(opaque {line number: problem}, traceback or None, {line number: instruction}) of isalint on
    these lines."""
    from isalint.model.program import build_program
    from isalint.parse import parse_text

    text = "\n".join(lines) + "\n"
    if is64:
        text += "\t.amdhsa_wavefront_size32 0\n"  # the file's wave size, as a kernel descriptor gives it
    try:
        program = build_program(parse_text(text, "mc.s"))
    except Exception:  # noqa: BLE001
        return {}, traceback.format_exc(limit=-3), {}
    if program.wave64 != is64:
        return {}, "the wave size was not taken", {}
    by_line = {ins.lineno: ins for ins in program.instrs}
    opaque = {ins.lineno: ins.problem for ins in program.instrs if ins.opaque}
    seen = {ins.lineno for ins in program.instrs}
    for n in range(1, len(lines) + 1):
        if n not in seen:
            opaque[n] = "not read as an instruction line"
    if check:
        from isalint.lint.files import check_text
        from isalint.parse.errors import InputError

        try:
            check_text(text, "mc.s")
        except InputError:
            pass
        except Exception:  # noqa: BLE001
            return opaque, traceback.format_exc(limit=-3), by_line
    return opaque, None, by_line


def klass(name: str) -> str:
    stem = name.rsplit(".", 1)[0]
    unsupported = stem.startswith("gfx11_unsupported")
    stem = re.sub(r"^gfx11(50)?_(asm|dasm|unsupported)_?", "", stem)
    if unsupported:
        stem = "unsupported" + ("_" + stem if stem else "")
    stem = re.sub(r"(-fake16|-real16|_err|_errs|_t16_err|_t16_promote|_promote|_alias|_features)$", "", stem)
    return stem or name


def assembler(files: list[Path], mc: str, check: bool, misses: dict, tmp: Path):
    from isalint.binary.decoder import Decoder

    rows = []
    decoders = {(w, t): Decoder(w, t) for w in (False, True) for t in (False, True)}
    for path in files:
        text = path.read_text(errors="replace")
        configs = configurations(text, disassemble=False)
        if not configs:
            continue
        lines = instruction_lines(text)
        for triple, cpu, attrs in configs:
            rejected, encoded = llvm_assemble(mc, lines, triple, cpu, attrs, tmp)
            accepted = [n for n in range(1, len(lines) + 1) if n not in rejected]
            is64 = wave64(attrs)
            row = Counter(files=0, configs=1, lines=len(lines), accepted=len(accepted))
            kept = [lines[n - 1] for n in accepted]
            opaque, tb, by_line = isalint_lines(kept, is64, check) if kept else ({}, None, {})
            row["parse001"] = len(opaque)
            row["read"] = len(kept) - len(opaque)
            row["tracebacks"] = 1 if tb else 0
            for n, problem in sorted(opaque.items()):
                misses[klass(path.name)].append((path.name, cpu, ",".join(attrs), kept[n - 1], problem))
            if tb:
                misses["<tracebacks>"].append((path.name, cpu, ",".join(attrs), "", tb.strip().splitlines()[-1]))
            t16 = real_true16(attrs)
            if len(encoded) == len(accepted):
                codes = [code for _, code in encoded if code is not None]
                row["fixups"] += len(encoded) - len(codes)
                theirs = llvm_disassemble(mc, codes, triple, cpu, attrs, tmp)
                key = "decoded16" if t16 else "decoded"
                for n, (_, code) in enumerate(encoded, 1):
                    want = theirs.get(code) if code is not None else None
                    if want is None or "/*" in want:
                        row["undecodable"] += code is not None  # LLVM does not read its own bytes back
                        continue
                    ins = by_line.get(n)
                    if ins is not None and not ins.opaque:
                        row["regs_total"] += 1
                        # LLVM's disassembler prints an image atomic's data and address as their
                        # first registers: there the assembler's own echo of the line is the
                        # reference (elsewhere the echo keeps the written widths, which the
                        # disassembly corrects: an 8-register address of 6 dwords)
                        echo = encoded[n - 1][0]
                        ours = model_registers(ins)
                        llvm = named_registers(echo if echo.startswith("image_atomic_") else want)
                        if ours == llvm:
                            row["regs"] += 1
                        else:
                            misses["<registers>"].append((path.name, cpu, ",".join(attrs), kept[n - 1],
                                                          f"LLVM {want}: {sorted(llvm - ours)} not in the model, "
                                                          f"{sorted(ours - llvm)} not in LLVM's text"))
                    got = decode_text(decoders[is64, t16], code)
                    row[key + "_total"] += 1
                    if got == want:
                        row[key] += 1
                    else:
                        misses["<decoder>"].append((path.name, cpu, ",".join(attrs), want, got))
            else:
                row["unaligned"] += len(accepted)
            rows.append((path.name, cpu, attrs, row))
    return rows


def disassembler(files: list[Path], mc: str, misses: dict, tmp: Path):
    from isalint.binary.decoder import Decoder

    rows = []
    decoders = {(w, t): Decoder(w, t) for w in (False, True) for t in (False, True)}
    for path in files:
        text = path.read_text(errors="replace")
        configs = configurations(text, disassemble=True)
        prefixes, checks = check_lines(text)
        for triple, cpu, attrs in configs:
            active = prefixes.get((triple, cpu, attrs), set())
            cmd = [mc, f"-triple={triple}", f"-mcpu={cpu}", "-disassemble", "-show-encoding", str(path)]
            if attrs:
                cmd.insert(3, "-mattr=" + ",".join(attrs))
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            t16 = real_true16(attrs)
            is64 = wave64(attrs)
            row = Counter(configs=1)
            for want, code in _encoded(r.stdout):
                if code is None or "/*" in want:
                    row["invalid"] += code is not None  # bytes LLVM marks invalid in its text
                    continue
                got = decode_text(decoders[is64, t16], code)
                key = "decoded16" if t16 else "decoded"
                row[key + "_total"] += 1
                if got == want:
                    row[key] += 1
                else:
                    misses["<disassembler>"].append((path.name, cpu, ",".join(attrs), want, got))
                # the file's own CHECK line for these bytes, under a prefix this configuration checks
                checked = [checks[p, code] for p in sorted(active) if (p, code) in checks]
                if checked:
                    row["checks_total"] += 1
                    row["checks"] += got in checked
            rows.append((path.name, cpu, attrs, row))
    return rows


def _pct(a: int, b: int) -> str:
    return f"{a}/{b}" + (f" ({100.0 * a / b:.2f}%)" if b else "")


def render(asm_rows, dis_rows, misses, command: str, mc_version: str, source: str, show: int) -> str:
    by_class: dict[str, Counter] = defaultdict(Counter)
    files: dict[str, set] = defaultdict(set)
    for name, cpu, attrs, row in asm_rows:
        by_class[klass(name)].update(row)
        files[klass(name)].add(name)
    total = Counter()
    for c in by_class.values():
        total.update(c)
    out = ["# isalint on LLVM 19's gfx11 MC tests", "",
           f"- command: `{command}`",
           f"- assembler: {mc_version}",
           f"- tests: {source}",
           f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC", "",
           "Lines are counted once per RUN configuration of their file (a file assembled for wave32 and "
           "wave64 counts its lines twice). `accepted`: instruction lines llvm-mc assembles in that "
           "configuration; `read`: those isalint's model matches operand for operand (the others are "
           "PARSE001); `registers agree`: the VGPRs, SGPRs and trap temporaries of the model's operands are "
           "those LLVM's disassembly of the line's bytes names (its register widths; for image atomics, whose "
           "registers LLVM's disassembler prints only by their first, the assembler's echo of the line); "
           "`decoded`: LLVM's bytes decoded by isalint's decoder to LLVM's exact text, in the "
           "configurations without `+real-true16`; `decoded t16`: the same in `+real-true16` ones (the "
           "decoder in its `true16` syntax, register halves `v1.l`/`v1.h`).", "",
           "## Assembler tests (`MC/AMDGPU/*.s`)", "",
           "| class | files | configs | lines | accepted | read | PARSE001 | tracebacks | registers agree | decoded | "
           "decoded t16 |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def cells(c: Counter) -> str:
        return (f"{c['configs']} | {c['lines']} | {c['accepted']} | {c['read']} | {c['parse001']} | "
                f"{c['tracebacks']} | {_pct(c['regs'], c['regs_total'])} | {_pct(c['decoded'], c['decoded_total'])} | "
                f"{_pct(c['decoded16'], c['decoded16_total'])} |")

    for k in sorted(by_class):
        out.append(f"| {k} | {len(files[k])} | " + cells(by_class[k]))
    out.append(f"| **total** | {sum(len(v) for v in files.values())} | " + cells(total))
    out += ["", f"Branches to labels (bytes with a fixup, not decoded): {total['fixups']}; accepted lines whose "
            f"bytes LLVM's disassembler does not read back (not compared): {total['undecodable']}; lines in "
            f"files whose output could not be paired with their lines: {total['unaligned']}.", ""]
    dis_total = Counter()
    for _, _, _, row in dis_rows:
        dis_total.update(row)
    dis_files = {name for name, *_ in dis_rows}
    out += ["## Disassembler tests (`MC/Disassembler/AMDGPU/*.txt`)", "",
            "`decoded`: the decoder's text is `llvm-mc -disassemble`'s for the same bytes in the same "
            "configuration; `CHECK lines`: it is the text of the file's own CHECK line for those bytes under a "
            "prefix of that configuration (where one holds the whole text, without FileCheck patterns).", "",
            "| files | configs | marked invalid by LLVM | decoded | decoded t16 | CHECK lines |",
            "|---:|---:|---:|---:|---:|---:|",
            f"| {len(dis_files)} | {dis_total['configs']} | {dis_total['invalid']} | "
            f"{_pct(dis_total['decoded'], dis_total['decoded_total'])} | "
            f"{_pct(dis_total['decoded16'], dis_total['decoded16_total'])} | "
            f"{_pct(dis_total['checks'], dis_total['checks_total'])} |", ""]
    refused = {k: v for k, v in misses.items() if not k.startswith("<")}
    out += ["## Accepted lines isalint refuses (PARSE001)", ""]
    if not refused:
        out.append("None.")
    for k in sorted(refused):
        out.append(f"- **{k}**: {len(refused[k])}")
        for name, cpu, attrs, line, problem in refused[k][:show]:
            out.append(f"  - `{line}` ({name}, {cpu} {attrs}): {problem}")
    regs = misses.get("<registers>", [])
    out += ["", f"## Registers the model and LLVM disagree on: {len(regs)}", ""]
    out += [f"- `{line}` ({name}, {cpu} {attrs}): {problem}" for name, cpu, attrs, line, problem in regs[:show * 3]]
    out += ["", "## Tracebacks", ""]
    tbs = misses.get("<tracebacks>", [])
    out += [f"- {name} ({cpu} {attrs}): {problem}" for name, cpu, attrs, _, problem in tbs] or ["None."]
    for key, title in (("<decoder>", "assembler tests"), ("<disassembler>", "disassembler tests")):
        diffs = misses.get(key, [])
        plain = [d for d in diffs if "real-true16" not in d[2] or "-real-true16" in d[2]]
        images = sum(1 for d in plain if d[3].startswith("image_"))
        out += ["", f"## Decoder differences, {title} (without `+real-true16`): {len(plain)}", "",
                f"Image (MIMG) instructions, which the decoder leaves to `llvm-objdump`: {images}; others: "
                f"{len(plain) - images}.", ""]
        by_op = Counter(d[3].split()[0] if d[3] else "?" for d in plain)
        for op, n in by_op.most_common(show * 3):
            example = next(d for d in plain if (d[3].split()[0] if d[3] else "?") == op)
            out.append(f"- `{op}` x{n}: LLVM `{example[3]}`, isalint `{example[4]}` ({example[0]})")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mc_dir", nargs="?")
    ap.add_argument("--table", default=str(HERE / "results" / "llvm_mc_tests.md"))
    ap.add_argument("--llvm-mc", default="llvm-mc-19")
    ap.add_argument("--only", default="*", help="test files whose name matches this glob")
    ap.add_argument("--no-check", action="store_true", help="model only, no rules")
    ap.add_argument("--no-disassembler", action="store_true")
    ap.add_argument("--misses", type=int, default=8, help="refused lines shown per class")
    ap.add_argument("--label", help="what the tests are, for the table (default: their directory)")
    args = ap.parse_args(argv)
    from_env = args.mc_dir is None
    if from_env:
        args.mc_dir = os.environ.get("ISALINT_LLVM_MC_TESTS")
    if not args.mc_dir or not Path(args.mc_dir).is_dir():
        print("no LLVM MC test directory (argument or ISALINT_LLVM_MC_TESTS): nothing to measure")
        return 0
    mc = shutil.which(args.llvm_mc)
    if mc is None:
        print(f"{args.llvm_mc} not found: nothing to measure")
        return 0
    root = Path(args.mc_dir)
    asm_dir = root / "AMDGPU" if (root / "AMDGPU").is_dir() else root
    dis_dir = asm_dir.parent / "Disassembler" / "AMDGPU"
    asm_files = sorted(p for p in asm_dir.glob("*.s") if fnmatch.fnmatch(p.name, args.only))
    dis_files = sorted(p for p in dis_dir.glob("*.txt") if fnmatch.fnmatch(p.name, args.only)) \
        if dis_dir.is_dir() and not args.no_disassembler else []
    misses: dict[str, list] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        asm_rows = assembler(asm_files, mc, not args.no_check, misses, Path(tmp))
        dis_rows = disassembler(dis_files, mc, misses, Path(tmp))
    version = subprocess.run([mc, "--version"], capture_output=True, text=True).stdout
    version = next((v.strip() for v in version.splitlines() if "version" in v.lower()), mc)
    words = [f'"{a}"' if (" " in a or "'" in a) and '"' not in a else shlex.quote(a) for a in (argv or sys.argv[1:])]
    command = "python benchmarks/bench_llvm_mc_tests.py " + " ".join(words)
    if from_env:
        command = "ISALINT_LLVM_MC_TESTS=<LLVM's test/MC> " + command
    table = render(asm_rows, dis_rows, misses, command.strip(), version, args.label or str(root), args.misses)
    print(table)
    if args.table:
        Path(args.table).write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
