"""isalint's gfx11 decoder held to llvm-objdump, instruction by instruction, on a whole code object.

    python benchmarks/bench_decoder.py LIBRARY.co [--objdump-output FILE] [--limit N] [--show N]

Runs ``llvm-objdump -d`` on the file (or reads its saved output) and compares every instruction it
prints with the text isalint's decoder gives for the same address, operand for operand. The two
spellings are normalised where LLVM has equivalent forms: whitespace, and a branch's target, which
objdump names by a symbol at the target (any of them) and isalint by the label of its listing.
Wave64 kernels (the descriptor's wavefront-size bit) are disassembled by objdump a second time
with ``--mattr=+wavefrontsize64`` over their address ranges, so that both sides print 64-bit lane
masks (``vcc``, ``s[0:1]``). The zero fill between kernels (objdump's ``...`` and ``v_illegal``) is
not code and not compared.

Prints the number of instructions compared, how many agree, and the disagreements and the
instructions isalint does not decode, by opcode, with examples.
"""
from __future__ import annotations

import argparse
import collections
import mmap
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from isalint.binary import codeobject, listing  # noqa: E402
from isalint.binary.decoder import UnknownEncoding  # noqa: E402
from isalint.binary.descriptor import Descriptor  # noqa: E402

_LINE = re.compile(r"^\t(.*?)\s*//\s*([0-9A-Fa-f]+):\s*([0-9A-Fa-f ]+)$")
_BRANCH = re.compile(r"^(s_branch|s_cbranch_\w+|s_call_b64 [^,]+,|s_subvector_loop_\w+ [^,]+,)\s+(\S+)$")


def objdump_tool() -> str:
    for name in [f"llvm-objdump-{v}" for v in range(22, 15, -1)] + ["llvm-objdump"]:
        path = shutil.which(name)
        if path:
            return path
    sys.exit("no llvm-objdump found (apt-get install llvm-19)")


def objdump_lines(tool: str, path: str, saved: str | None, extra=()):
    if saved and not extra:
        with open(saved, encoding="utf-8", errors="replace") as fh:
            yield from fh
        return
    proc = subprocess.Popen([tool, "-d", *extra, path], stdout=subprocess.PIPE, text=True, errors="replace",
                            bufsize=1 << 20)
    yield from proc.stdout
    proc.wait()


def norm(text: str) -> str:
    return " ".join(text.split())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--objdump-output", help="llvm-objdump -d's saved output for PATH (saves running it)")
    ap.add_argument("--limit", type=int, default=0, help="compare the first N kernels only")
    ap.add_argument("--show", type=int, default=3, help="examples per opcode")
    args = ap.parse_args()
    tool = objdump_tool()
    start = time.time()
    with open(args.path, "rb") as fh:
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    kernels, _skipped = codeobject.read(data, args.path)
    kernels.sort(key=lambda k: k.code_addr)
    if args.limit:
        kernels = kernels[:args.limit]
    wave64 = [k for k in kernels if Descriptor(k.descriptor).wave64]
    stats = collections.Counter()
    differ: dict[str, list] = collections.defaultdict(list)
    unknown: dict[str, list] = collections.defaultdict(list)

    def ours_of(kernel):
        """address -> (text, target address or None, names at the target) of the kernel's instructions."""
        try:
            instrs = listing.decode_kernel(kernel)
        except listing.ListingError as exc:
            stats["kernels not decoded"] += 1
            unknown[str(exc).split(": ", 2)[-1].split(" ")[0]].append(str(exc))
            return {}
        out = {}
        for off, _size, text, target in instrs:
            names = kernel.labels.get(target, []) if target is not None else []
            out[kernel.code_addr + off] = (text, target, names)
        return out

    def compare(lines, selected):
        queue = list(selected)
        current, table, end = None, {}, -1
        for line in lines:
            m = _LINE.match(line)
            if not m:
                continue
            addr = int(m.group(2), 16)
            while queue and addr >= queue[0].code_addr:
                current = queue.pop(0)
                table = ours_of(current)
                end = current.code_addr + len(current.code)
            if current is None or addr >= end:
                continue
            text = m.group(1)
            if text in ("v_illegal", "...", "") or addr not in table and not table:
                continue
            ours = table.get(addr)
            stats["compared"] += 1
            if ours is None:
                if int(m.group(3).split()[0], 16) == 0:
                    stats["compared"] -= 1  # zero fill inside the kernel's range
                    continue
                stats["no instruction at this address"] += 1
                unknown[text.split()[0]].append(f"0x{addr:x}: {text}")
                continue
            mine, target, names = ours
            if target is not None:
                b = _BRANCH.match(norm(text))
                theirs_target = b.group(2) if b else None
                if theirs_target is not None and (theirs_target in names or not names):
                    text = text.replace(theirs_target, "{}")
            if norm(mine) == norm(text):
                stats["agree"] += 1
            else:
                stats["differ"] += 1
                differ[text.split()[0]].append(f"0x{addr:x}: objdump: {norm(text)}\n      isalint: {mine}")

    wave32 = [k for k in kernels if k not in set(wave64)]
    compare(objdump_lines(tool, args.path, args.objdump_output), wave32)
    for k in wave64:
        extra = ("--mattr=+wavefrontsize64", f"--start-address=0x{k.code_addr:x}",
                 f"--stop-address=0x{k.code_addr + len(k.code):x}")
        compare(objdump_lines(tool, args.path, None, extra), [k])
    elapsed = time.time() - start
    print(f"{args.path}: {len(kernels)} kernels ({len(wave64)} wave64), {stats['compared']} instructions compared "
          f"with {Path(tool).name} in {elapsed:.0f} s")
    print(f"  agree: {stats['agree']}   differ: {stats['differ']}   not decoded by isalint: "
          f"{stats['no instruction at this address']} (+ {stats['kernels not decoded']} kernels)")
    for title, table in (("differ", differ), ("not decoded", unknown)):
        for op, examples in sorted(table.items(), key=lambda kv: -len(kv[1])):
            print(f"  {title}: {op}: {len(examples)}")
            for e in examples[:args.show]:
                print(f"    {e}")
    return 0 if stats["compared"] and stats["agree"] == stats["compared"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
