"""WAIT001 on real compiler output, checked against an independent brute-force oracle.

The oracle does not use isalint.model.counters: it enumerates concrete hardware
behaviours. Its state is the ordered list of memory ops in flight; at every
``s_waitcnt`` it tries every way the hardware may have retired ops (each in-order
stream retires oldest first, scalar loads and messages in any order) that leaves
the counter at the threshold, and it explores every (block, state) pair the CFG
reaches, loop back edges included. A register read (or overwritten by anything
but a later load of the same in-order stream) while an op that writes it is in
flight is a hazard.
"""
from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys

import pytest
from conftest import REPO, all_real_kernels

from isalint import records
from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.model.waitcnt import wait_thresholds
from isalint.parse.source import parse_text

MAX_INFLIGHT = 63


# -- the oracle ---------------------------------------------------------------------------------

def _ops_of(ins, lds_free=False):
    """(counter, stream, in_order, dests) for each counter op of ``ins``; stores are irrelevant here.

    A FLAT op is one more op of the in-order LDS stream on lgkmcnt (gfx10+); in a program without
    any LDS access its data comes from memory, and only vmcnt says when it landed."""
    k, cnt = ins.klass, ins.counters
    dests = frozenset(ins.defs)
    if k in ("vmem_load", "scratch_load") or (k == "vmem_atomic" and dests):
        out = [("vmcnt", "vm", True, dests)]
        if "lgkmcnt" in cnt:
            out.append(("lgkmcnt", "lds", True, frozenset() if lds_free else dests))
        return out
    if k == "lds":
        return [("lgkmcnt", "lds", True, dests)]
    if k == "smem":
        return [("lgkmcnt", "smem", False, dests)]
    if k == "message":
        return [("lgkmcnt", "msg", False, dests)]
    return []


def _retire(state, counter, n):
    """Every maximal set of ops still in flight after ``s_waitcnt counter(n)``."""
    mine = [i for i, op in enumerate(state) if op[0] == counter]
    if len(mine) <= n:
        return [state]
    streams: dict[str, list[int]] = {}
    free = []
    for i in mine:
        (streams.setdefault(state[i][1], []) if state[i][2] else free).append(i)
    drop_total = len(mine) - n
    results = set()
    stream_items = list(streams.values())
    # choose how many to retire from the front of each in-order stream; the rest from the free ops
    for counts in itertools.product(*[range(len(s) + 1) for s in stream_items]):
        retired_in_order = sum(counts)
        rest = drop_total - retired_in_order
        if rest < 0 or rest > len(free):
            continue
        front = set()
        for s, c in zip(stream_items, counts):
            front.update(s[:c])
        for chosen in itertools.combinations(free, rest):
            gone = front | set(chosen)
            results.add(tuple(op for i, op in enumerate(state) if i not in gone))
    return list(results)


def oracle(program, waits_at: dict | None = None):
    """{instruction index: counters it finds in flight and conflicting} over every path.

    ``waits_at`` inserts, right after the hazard check of an instruction, a wait
    retiring every op of the given counters (the wait a finding asks for).
    """
    waits_at = waits_at or {}
    cfg = program.cfg()
    instrs = program.instrs
    lds_free = not any(ins.klass == "lds" or "shared_base" in ins.line.text or "shared_limit" in ins.line.text
                       for ins in instrs) and not any(
        k.descriptor.get(".amdhsa_group_segment_fixed_size", 0) for k in program.kernels)
    hazards: dict[int, set] = {}
    start = [(b.id, ()) for b in cfg.blocks if not b.preds]
    seen = set(start)
    work = list(start)
    while work:
        b, state = work.pop()
        blk = cfg.blocks[b]
        states = [state]
        for i in blk.indices():
            ins = instrs[i]
            nxt = []
            for st in states:
                if ins.klass == "waitcnt":
                    outs = [st]
                    for c, n in (wait_thresholds(ins) or {}).items():
                        outs = [o2 for o in outs for o2 in _retire(o, c, n)]
                    nxt.extend(outs)
                    continue
                ops = _ops_of(ins, lds_free)
                own = {(c, s) for c, s, order, d in ops if order and d}
                # a D16 load reads its destination (the half it keeps) when its data returns: after
                # the earlier ops of its own in-order stream
                merged = set(ins.defs) if ("_load_d16" in ins.opcode or (ins.klass == "lds" and "_d16" in ins.opcode)
                                           ) else set()
                bad = {op[0] for op in st if (set(ins.uses) - (merged if op[2] and (op[0], op[1]) in own
                                                               else set())) & op[3]} | {
                    op[0] for op in st if set(ins.defs) & op[3] and not (op[2] and (op[0], op[1]) in own)}
                if ins.klass == "barrier":  # the other waves read LDS this wave has not finished with
                    bad |= {op[0] for op in st if instrs[op[4]].klass == "lds"}
                if bad:
                    hazards.setdefault(i, set()).update(bad)
                if i in waits_at:
                    st = tuple(op for op in st if op[0] not in waits_at[i])
                st = list(st)
                if ins.opcode in ("s_swappc_b64", "s_call_b64"):
                    st = []  # the callee waits for everything it finds in flight
                for op in ops:
                    st.append(op + (i,))
                    same = [j for j, o in enumerate(st) if o[0] == op[0]]
                    if len(same) > MAX_INFLIGHT:  # the counter is full: the oldest retires first
                        del st[same[0]]
                nxt.append(tuple(st))
            states = list(dict.fromkeys(nxt))
        for st in states:
            for s in blk.succs:
                key = (s, st)
                if key not in seen:
                    seen.add(key)
                    work.append(key)
    return hazards


def _needs(message: str) -> set[str]:
    tail = message.split("needs", 1)[1]
    return set(re.findall(r"(vmcnt|lgkmcnt|expcnt|vscnt)\(\d+\)", tail))


# -- helpers ------------------------------------------------------------------------------------

def _analysis(text: str, path: str = "kernel5.s") -> Analysis:
    return Analysis.from_source(parse_text(text, path))


def _errors(analysis):
    return [d for d in check_analysis(analysis, ["WAIT001"]) if d.severity == "error"]


def _mutations(text: str, program):
    """(description, line number, replacement line) deleting, weakening and strengthening each s_waitcnt.

    A deleted wait becomes ``s_nop 0`` (no counter effect), so every line and instruction keeps its place.
    """
    lines = text.splitlines()
    for ins in program.instrs:
        if ins.opcode != "s_waitcnt":
            continue
        n = ins.lineno - 1
        yield f"delete line {ins.lineno}", ins.lineno, "\ts_nop 0"
        for counter, value in (wait_thresholds(ins) or {}).items():
            if value > 0:  # a stricter wait is always safe
                yield (f"strengthen line {ins.lineno} to {counter}({value - 1})", ins.lineno,
                       re.sub(rf"{counter}\(\d+\)", f"{counter}({value - 1})", lines[n]))
            yield (f"weaken line {ins.lineno} to {counter}({value + 1})", ins.lineno,
                   re.sub(rf"{counter}\(\d+\)", f"{counter}({value + 1})", lines[n]))


def _mutated(program, lineno: int, new_text: str) -> Analysis:
    """``program`` with the instruction on ``lineno`` replaced; the CFG is the same (no branch changes)."""
    from isalint.model.program import _make_instr

    line = parse_text(new_text + "\n", program.path).lines[0]
    line.number = lineno
    old = next(ins for ins in program.instrs if ins.lineno == lineno)
    instrs = list(program.instrs)
    instrs[old.index] = _make_instr(old.index, line)
    instrs[old.index].block = old.block
    mutated = records.replace(program, instrs=instrs, _cfg=program.cfg())
    return Analysis(mutated)


def _first_reached(analysis, line: int, targets: set[int]) -> int | None:
    """The first line of ``targets`` that execution reaches from source line ``line`` on (BFS over the CFG)."""
    program, cfg = analysis.program, analysis.cfg
    start = next(ins.index for ins in program.instrs if ins.lineno >= line)
    seen, frontier = {start}, [start]
    while frontier:
        nxt = []
        for i in frontier:
            if program.instrs[i].lineno in targets:
                return program.instrs[i].lineno
            blk = cfg.blocks[cfg.block_of[i]]
            succ = [i + 1] if i + 1 < blk.last else [cfg.blocks[s].first for s in blk.succs]
            for j in succ:
                if j not in seen:
                    seen.add(j)
                    nxt.append(j)
        frontier = nxt
    return None


def _run_mutation(a: Analysis):
    """The rule's errors, every oracle hazard, and the oracle's hazards once the reported waits are in."""
    errors = _errors(a)
    by_line = {ins.lineno: ins.index for ins in a.program.instrs}
    waits = {by_line[d.line]: _needs(d.message) for d in errors}
    lines = {a.program.instrs[i].lineno for i in oracle(a.program)}
    after_fix = {a.program.instrs[i].lineno for i in oracle(a.program, waits)}
    found = {d.line for d in errors}
    return a, lines, after_fix, found, errors


# -- tests --------------------------------------------------------------------------------------

def test_no_false_wait001_on_kernel5(kernel5):
    a = Analysis.from_path(str(kernel5))
    assert oracle(a.program) == {}
    assert _errors(a) == []


@pytest.mark.parametrize("path", all_real_kernels(), ids=lambda p: p.name)
def test_no_wait001_error_on_compiler_output(path):
    a = Analysis.from_path(str(path))
    assert _errors(a) == [], "compiler output has no waitcnt hazard"
    assert oracle(a.program) == {}


def test_every_wait_mutation_of_kernel5(kernel5):
    """Delete or weaken each s_waitcnt of kernel5 in turn; WAIT001 must match the oracle."""
    text = kernel5.read_text()
    base = _analysis(text)
    unsafe = safe = 0
    inner = {ins.lineno for ins in base.program.instrs
             if ins.opcode == "s_waitcnt" and base.cfg.loop_of(ins.index) is base.cfg.find_loop(".LBB0_9")}
    assert len(inner) == 4
    inner_unsafe = 0
    for what, line, new_text in _mutations(text, base.program):
        a, hazard_lines, first_lines, found, errors = _run_mutation(_mutated(base.program, line, new_text))
        assert bool(hazard_lines) != what.startswith("strengthen"), what
        if hazard_lines:
            unsafe += 1
            inner_unsafe += line in inner
            # every report is a real hazard, and once each reported instruction gets the wait the
            # message asks for, the oracle finds no unsafe use anywhere else
            assert found <= hazard_lines, f"{what}: WAIT001 at {sorted(found - hazard_lines)} is not a hazard"
            assert first_lines == found, f"{what}: oracle after fixes {sorted(first_lines)}, WAIT001 {sorted(found)}"
            first_use = _first_reached(a, line, hazard_lines)
            assert first_use in found, f"{what}: the first unsafe use (line {first_use}) is not reported"
            assert all("needs s_waitcnt" in d.message for d in errors)
        else:
            safe += 1
            assert not found, f"{what} is safe (oracle) but WAIT001 reports {[d.message for d in errors]}"
    # the inner loop's four waits: deleting or weakening any of them is unsafe
    assert inner_unsafe == 8
    # the compiler's waits are tight: every deletion and every +1 is unsafe (oracle), every -1 safe
    assert (unsafe, safe) == (100, 12), (unsafe, safe)


def test_inner_loop_mutation_messages(kernel5):
    text = kernel5.read_text()
    lines = text.splitlines(keepends=True)
    # weaken the first wait of the inner loop (line 569, lgkmcnt(3)) to lgkmcnt(4)
    assert lines[568].strip() == "s_waitcnt lgkmcnt(3)"
    mutated = "".join(lines[:568] + ["\ts_waitcnt lgkmcnt(4)\n"] + lines[569:])
    errors = _errors(_analysis(mutated))
    assert len(errors) == 1
    d = errors[0]
    assert d.line == 570  # v_fmac_f32_e32 v124, v184, v192: the first use of the third load (v192)
    assert "v192" in d.message and "line 563" in d.message and "needs s_waitcnt lgkmcnt(3)" in d.message
    # one problem, one finding: the weakened wait is not also "stricter than needed" (WAIT002)
    assert check_analysis(_analysis(mutated), ["WAIT002"]) == []
    # delete the last one (lgkmcnt(0) at 596): the first use of v[204:207] is flagged
    mutated = "".join(lines[:595] + lines[596:])
    errors = _errors(_analysis(mutated))
    assert [(d.line, "needs s_waitcnt lgkmcnt(0)" in d.message) for d in errors] == [(596, True)]
    assert "v205" in errors[0].message


def test_no_stricter_than_needed_note_on_any_weakened_wait_of_kernel5(kernel5):
    """Every wait of kernel5 weakened by one: WAIT001 reports the use, WAIT002 never the wait."""
    text = kernel5.read_text()
    base = _analysis(text)
    weakened = [(line, new) for what, line, new in _mutations(text, base.program) if what.startswith("weaken")]
    assert len(weakened) >= 40
    for line, new in weakened:
        a = _mutated(base.program, line, new)
        assert [d.line for d in check_analysis(a, ["WAIT002"])] == [], (line, new)


def test_outer_loop_loads_in_flight_across_back_edge(kernel5):
    """The global loads of %bb.7 are consumed in %bb.11 after s_waitcnt vmcnt(0) in %bb.10."""
    text = kernel5.read_text()
    lines = text.splitlines(keepends=True)
    assert lines[641].strip() == "s_waitcnt vmcnt(0)"
    errors = _errors(_analysis("".join(lines[:641] + lines[642:])))
    assert errors, "deleting the outer loop's vmcnt(0) must be reported"
    # %bb.10 -> .LBB0_5 -> .LBB0_6 -> %bb.7 overwrites v167 while last iteration's load may land
    # in it; %bb.10 -> %bb.11 stores v167 before it landed
    assert [d.line for d in errors] == [423, 646]
    assert all("v167" in d.message and "global_load_b32 at line 435" in d.message
               and "needs s_waitcnt vmcnt(15)" in d.message for d in errors)
    assert "overwritten" in errors[0].message and "earlier iteration" in errors[0].message
    assert "read" in errors[1].message
    # weakening to vmcnt(1) leaves only the last load (v182) in flight: its first use is flagged
    weak = "".join(lines[:641] + ["\ts_waitcnt vmcnt(1)\n"] + lines[642:])
    errors = _errors(_analysis(weak))
    assert [d.line for d in errors] == [538, 662] and all("v182" in d.message for d in errors)


def test_json_output(kernel5, tmp_path):
    lines = kernel5.read_text().splitlines(keepends=True)
    bad = tmp_path / "k5_bad.s"
    bad.write_text("".join(lines[:568] + lines[569:]))
    proc = subprocess.run([sys.executable, "-m", "isalint", "check", "--select", "WAIT001", "--format", "json",
                           str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    items = data if isinstance(data, list) else data.get("diagnostics", data)
    errors = [d for d in items if d["code"] == "WAIT001" and d["severity"] == "error"]
    assert len(errors) == 1 and errors[0]["line"] == 569 and "lgkmcnt(3)" in errors[0]["message"]


def test_d16_load_merging_into_a_register_of_its_own_stream():
    """A D16 load keeps half of its destination, read when its data returns: an earlier load of
    the same in-order stream into that register needs no wait; another stream's load, or a VALU
    read of the register, does."""
    text = ("k:\n"
            "global_load_u16 v13, v[0:1], off\n"
            "global_load_d16_hi_b16 v13, v[2:3], off\n"
            "v_add_f32_e32 v1, v13, v13\n"
            "ds_load_u16 v14, v5\n"
            "global_load_d16_hi_b16 v14, v[2:3], off\n"
            "s_waitcnt vmcnt(0) lgkmcnt(0)\n"
            "s_endpgm\n")
    a = _analysis(text, "d16.s")
    found = {d.line: d.message for d in _errors(a)}
    assert set(found) == {4, 6}, found
    assert "vmcnt(0)" in found[4] and "lgkmcnt(0)" in found[6]
    assert set(oracle(a.program)) == {ins.index for ins in a.program.instrs if ins.lineno in (4, 6)}


INPUTS = REPO / "fixtures" / "inputs"


@pytest.mark.parametrize("name,shape", [
    ("waitcnt_calls.s", "s_swappc_b64"),  # loads before device-function calls, results in v0 after them
    ("waitcnt_flat.s", "flat_load_b32"),  # generic pointers (global or LDS), in a file that also uses LDS
    ("waitcnt_lds_d16.s", "ds_load_u16_d16_hi"),  # two f16 packed into one VGPR from LDS
    ("waitcnt_barrier_prefetch_cumode.s", "s_barrier"),  # a prefetch loop around workgroup barriers
    ("waitcnt_wave64.s", "vcc"),  # wave64: vcc and exec are pairs
])
def test_no_wait001_on_llvm_output_of_calls_flat_d16_barriers(name, shape):
    """clang-19 output (fixtures/inputs/build.sh) of the shapes WAIT001 used to misjudge: no error, and
    the oracle agrees there is no hazard."""
    path = INPUTS / name
    text = path.read_text()
    assert shape in text
    a = Analysis.from_path(str(path))
    assert [d.message for d in _errors(a)] == []
    assert oracle(a.program) == {}
