"""The SIMD's issue rule, read from hardware traces of a Radeon 7900 XTX.

    python benchmarks/bench_issue_rule.py TINYGRAD_DIR [--examples GLOB ...] [--markdown] [--show N]

tinygrad's repository holds SQ thread traces (SQTT) taken on a 7900 XTX
(``extra/sqtt/examples/gfx1100/*.pkl``: a small GEMM, an elementwise kernel, a barrier test and a
sweep over the gfx11 opcodes, each run twice) and a decoder for them
(``tinygrad/renderer/amd/sqtt.py``), which maps each instruction packet to the instruction's address.
This script runs that decoder as a tool, in a subprocess with ``TINYGRAD_DIR`` on its path (use a
checkout of the commit that wrote the examples: they are pickles of its classes), and keeps only
(wave, cycle, address) per issued instruction. Everything else is isalint's: the code object in each
trace is decoded by isalint's decoder and modelled by its program model, so each issue is known by
its unit, the registers it reads and writes and the model's latency for them.

It measures, per SIMD of the traced compute unit:

* whether one wave ever issues two instructions in the same cycle;
* which units issue in the same cycle from different waves (the category rule AMD documents for
  its scheduler: at most one instruction per category per cycle, each from a different wave);
* the gap from one instruction of a wave to its next, by the pair of units, split into pairs where the
  second reads a register the first writes (a dependency) and pairs that are independent;
* for independent VALU pairs, the gap against isalint's VGPR-bank model's stall for the first.

The timestamps are the trace's, in shader-clock cycles.
"""
from __future__ import annotations

import argparse
import base64
import collections
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# Runs inside the tinygrad checkout: the decoder's (packet, instruction) stream reduced to plain data.
_EXTRACT = r"""
import glob, json, pickle, sys, base64
from tinygrad.renderer.amd.sqtt import map_insts, WAVEEND
out = []
for path in sorted({p for pattern in sys.argv[1:] for p in glob.glob(pattern)}):
    data = pickle.load(open(path, "rb"))
    programs = {e.tag: e for e in data if type(e).__name__ == "ProfileProgramEvent"}
    for ev in data:
        if type(ev).__name__ != "ProfileSQTTEvent" or not ev.itrace:
            continue
        prg = programs.get(ev.kern)
        if prg is None:
            continue
        issues, live = [], {}
        run = 0
        for packet, info in map_insts(ev.blob, prg.lib, "gfx1100"):
            if info is None:
                continue
            if isinstance(packet, WAVEEND):
                live.pop(info.wave, None)
                continue
            if info.wave not in live:
                run += 1
                live[info.wave] = run
            issues.append([live[info.wave], int(packet._time), int(info.pc)])
        out.append({"trace": path.rsplit("/", 1)[-1], "se": ev.se, "kernel": prg.name,
                    "lib": base64.b64encode(prg.lib).decode(), "issues": issues})
json.dump(out, sys.stdout)
"""


def extract(tinygrad: Path, patterns: list[str]) -> list[dict]:
    """The traces' issues, by tinygrad's decoder run in its own checkout."""
    env = {"PYTHONPATH": str(tinygrad), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", _EXTRACT, *patterns], cwd=tinygrad, env=env,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no message)"]
        sys.exit(f"bench_issue_rule: tinygrad's decoder failed in {tinygrad}: {tail[0]}")
    return json.loads(proc.stdout)


class Code:
    """One traced code object, decoded and modelled by isalint: address -> (unit, reads, writes, stall)."""

    def __init__(self, lib: bytes, name: str):
        from isalint.analysis import Analysis
        from isalint.binary import codeobject, listing
        from isalint.estimate.costs import UNIT_NAMES, CostModel
        from isalint.hw.timing import GFX1100
        from isalint.parse.source import parse_text

        self.at: dict[int, tuple] = {}
        if codeobject.is_code_object(lib):
            kernels, _ = codeobject.read(lib, name)
            listings = []
            for kernel in kernels:
                instrs = listing.decode_kernel(kernel)
                listings.append((kernel.code_addr, instrs, listing.render(kernel, instrs)))
        else:  # raw machine code after a 256-byte header (the opcode sweep): the trace's addresses are offsets
            instrs, text = _raw_listing(lib, RAW_HEADER)
            listings = [(RAW_HEADER, instrs, text)]
        for code_addr, instrs, text in listings:
            program = Analysis.from_source(parse_text(text, name)).program
            assert len(program.instrs) == len(instrs), "one program instruction per decoded one"
            costs = CostModel(program, program.kernels[0], GFX1100)
            for i, (offset, _size, line, _t) in enumerate(instrs):
                c = costs.cost(i)
                ins = program.instrs[i]
                unit = UNIT_NAMES[c.unit]
                implicit = () if unit in ("SALU", "branch") else ("exec_lo", "exec")  # vector work reads EXEC
                regs = frozenset(r for r in ins.uses if r not in implicit)
                self.at[code_addr + offset] = (unit, regs, frozenset(ins.defs), c.occupy, line)


RAW_HEADER = 256


def _raw_listing(blob: bytes, start: int):
    """Raw gfx11 machine code from ``start``, as (offset, size, text, target) and a listing with labels;
    words isalint does not decode are left out (the pairs around them are not measured)."""
    from isalint.binary import listing
    from isalint.binary.decoder import UnknownEncoding

    code = blob[start:]
    decode = listing.decoder(False).decode
    end = len(code.rstrip(b"\0"))
    instrs, k = [], 0
    while k < end:
        try:
            size, text, target = decode(code, k)
        except UnknownEncoding:
            k += 4
            continue
        instrs.append((k, size, text, target))
        k += size
    targets = {t for *_rest, t in instrs if t is not None}
    lines = []
    for offset, _size, text, target in instrs:
        if offset in targets:
            lines.append(f"L{offset}:")
        lines.append("\t" + (text.replace("{}", f"L{target}") if target is not None else text))
    lines += [f"L{t}:" for t in sorted(targets) if t >= k]
    return instrs, "\n".join(lines) + "\n"


def analyse(traces: list[dict]) -> dict:
    codes: dict[str, Code] = {}
    skipped: set[str] = set()
    same_wave_same_cycle = 0
    issued = 0
    together = collections.Counter()  # units issued in one cycle by different waves
    cycles_with_issue = 0
    gaps = collections.defaultdict(list)  # (unit, unit, dependent) -> gaps
    bank = collections.defaultdict(list)  # VALU cycles the model charges the first VALU -> gap to the next VALU
    examples = collections.defaultdict(list)
    for tr in traces:
        key = tr["trace"].split("_run_")[0] + ":" + tr["kernel"]
        code = codes.get(key)
        if code is None:
            from isalint.binary.codeobject import CodeObjectError

            try:
                code = codes[key] = Code(base64.b64decode(tr["lib"]), tr["kernel"])
            except CodeObjectError as exc:
                skipped.add(f"{key} ({exc})")
                continue
        if code is None:
            continue
        by_cycle = collections.defaultdict(list)
        last: dict[int, tuple] = {}
        for wave, t, pc in tr["issues"]:
            ins = code.at.get(pc)
            if ins is None:
                continue
            if ins[0] in ("s_waitcnt", "s_nop", "s_barrier", "s_endpgm"):
                last.pop(wave, None)  # a gap across a wait measures the wait
                continue
            if ins[0] == "hint":
                continue  # takes no issue category
            issued += 1
            by_cycle[t].append((wave, ins[0]))
            prev = last.get(wave)
            if prev is not None:
                t0, p = prev
                if t == t0:
                    same_wave_same_cycle += 1
                dependent = "RAW" if p[2] & ins[1] else "WAR" if p[1] & ins[2] else "WAW" if p[2] & ins[2] else ""
                gap = t - t0
                gaps[(p[0], ins[0], dependent)].append(gap)
                if len(examples[(p[0], ins[0], dependent, gap)]) < 2:
                    examples[(p[0], ins[0], dependent, gap)].append(f"{p[4]}  ->  {ins[4]}")
                if p[0] == ins[0] == "VALU" and dependent != "RAW":
                    bank[p[3]].append(gap)
                    if len(examples[("occupy", p[3], gap)]) < 3:
                        examples[("occupy", p[3], gap)].append(f"{p[4]}  ->  {ins[4]}")
            last[wave] = (t, ins)
        for t, who in by_cycle.items():
            cycles_with_issue += 1
            if len(who) > 1:
                together[tuple(sorted(u for _w, u in who))] += 1
    return {"issued": issued, "same_wave_same_cycle": same_wave_same_cycle, "together": together,
            "cycles": cycles_with_issue, "gaps": gaps, "bank": bank, "examples": examples,
            "traces": sorted({t["trace"] for t in traces}), "kernels": sorted(codes),
            "skipped": sorted(skipped)}


def _q(values: list[int]) -> str:
    values = sorted(values)
    return f"{values[0]} / {statistics.median(values):g} / {values[len(values) * 9 // 10]}"


def report(r: dict, markdown: bool) -> str:
    out = []
    add = out.append
    add(f"traces: {', '.join(r['traces'])}")
    add(f"kernels: {', '.join(r['kernels'])}")
    if r["skipped"]:
        add(f"not read: {'; '.join(r['skipped'])}")
    add(f"instructions issued (categorised): {r['issued']:,}; cycles with an issue: {r['cycles']:,}")
    add(f"one wave, two instructions in one cycle: {r['same_wave_same_cycle']}")
    add("")
    add("| units issued in the same cycle by different waves | cycles |")
    add("| --- | ---: |")
    for units, n in r["together"].most_common():
        add(f"| {' + '.join(units)} | {n} |")
    add("")
    add("| first | next | register dependency | pairs | gap min / median / p90 (cycles) |")
    add("| --- | --- | --- | ---: | --- |")
    for (a, b, dep), gs in sorted(r["gaps"].items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if len(gs) >= 4:
            add(f"| {a} | {b} | {dep or 'none'} | {len(gs)} | {_q(gs)} |")
    add("")
    add("| VALU cycles isalint's model charges the first of two VALU instructions (the second not reading its result) "
        "| pairs | gap min / median / p90 |")
    add("| ---: | ---: | --- |")
    for stall, gs in sorted(r["bank"].items()):
        add(f"| {stall} | {len(gs)} | {_q(gs)} |")
    text = "\n".join(out)
    return text if markdown else text.replace("| --- ", "").replace("| ---: ", "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tinygrad", type=Path, help="a tinygrad checkout whose extra/sqtt/examples hold the traces")
    ap.add_argument("--examples", action="append", metavar="GLOB",
                    help="trace files (default: extra/sqtt/examples/gfx1100/*.pkl of the checkout); repeatable")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--show", type=int, default=0, help="print N example pairs per (units, gap)")
    args = ap.parse_args()
    if not (args.tinygrad / "tinygrad" / "renderer" / "amd" / "sqtt.py").is_file():
        sys.exit(f"bench_issue_rule: {args.tinygrad}: no tinygrad/renderer/amd/sqtt.py (a tinygrad checkout?)")
    patterns = args.examples or ["extra/sqtt/examples/gfx1100/*.pkl"]
    traces = extract(args.tinygrad.resolve(), patterns)
    if not traces:
        sys.exit(f"bench_issue_rule: no instruction-traced SQTT events in {', '.join(patterns)} (from {args.tinygrad})")
    r = analyse(traces)
    print(report(r, args.markdown))
    if args.show:
        for key, ex in sorted(r["examples"].items(), key=lambda kv: str(kv[0])):
            for e in ex[: args.show]:
                print(key, e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
