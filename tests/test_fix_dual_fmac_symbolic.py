"""Dataflow equivalence of ``fix --dual-fmac`` rewrites, by symbolic execution.

Independent of the emulator: both programs run on symbolic values along the same randomly
chosen path (the n-th conditional branch goes the same way in both), every instruction
computes an opaque function of its inputs except the few the pass rewrites (FMAs, moves, LDS
loads, which get their real meaning), and the two logs of stores (global and LDS) must be
identical. A wrong register anywhere — a swapped source, a missed move, a clobbered live
value, a wrong LDS offset — changes a logged store.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from isalint.analysis import Analysis
from isalint.fixes import FixRefused
from isalint.fixes.dual_fmac import apply
from isalint.parse.source import parse_text

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "fixtures" / "kernels"
KERNEL5 = ROOT.parent / "shared" / "corpus" / "kernel5.s"

_FMA = {"v_fmac_f32", "v_fmac_f32_e32", "v_fmac_f32_e64", "v_dual_fmac_f32"}
_MOV = {"v_mov_b32", "v_mov_b32_e32", "v_dual_mov_b32"}
_SKIP = {"waitcnt", "delay", "nop"}
_WIDE_MAD = {"v_mad_u64_u32", "v_mad_i64_i32"}


class Interner:
    def __init__(self):
        self.ids: dict[tuple, int] = {}

    def __call__(self, *node) -> int:
        return self.ids.setdefault(node, len(self.ids))


def _value(regs: dict, intern: Interner, name: str) -> int:
    if name not in regs:
        regs[name] = intern("init", name)
    return regs[name]


def _operand_values(regs, intern, op) -> list[int]:
    if op.is_register:
        return [_value(regs, intern, r) for r in op.registers()]
    return [intern("const", op.text.lower())]


def run(program, decisions: list[bool], intern: Interner, max_steps: int = 200_000):
    """Execute symbolically; return (store log, number of conditional branches taken)."""
    instrs = program.instrs
    regs: dict[str, int] = {}
    log: list[tuple] = []
    epoch = 0
    i = program.kernels[0].first
    n_cond = 0
    for _ in range(max_steps):
        ins = instrs[i]
        assert not ins.opaque, ins.text()
        if ins.ends_program() or ins.opcode == "s_endpgm":
            return log, n_cond
        k = ins.klass
        if k in _SKIP:
            i += 1
            continue
        if k == "barrier":
            epoch += 1
            i += 1
            continue
        if k == "branch":
            target = program.labels[ins.branch_target()]
            if ins.is_unconditional_branch():
                i = target
                continue
            if n_cond >= len(decisions):
                return log, n_cond
            taken = decisions[n_cond]
            n_cond += 1
            i = target if taken else i + 1
            continue
        writes: dict[str, int] = {}
        for stmt, slots in zip(ins.stmts, ins.slots):
            name = stmt.mnemonic
            ops = stmt.operands
            if name in _FMA:
                a, b = (_operand_values(regs, intern, o)[0] for o in ops[1:3])
                acc = _value(regs, intern, ops[0].registers()[0])
                writes[ops[0].registers()[0]] = intern("fma", min(a, b), max(a, b), acc)
            elif name in _MOV and not stmt.modifiers:
                writes[ops[0].registers()[0]] = _operand_values(regs, intern, ops[1])[0]
            elif name.startswith("ds_load_b") and len(ops) == 2:
                base = _value(regs, intern, ops[1].registers()[0])
                off = stmt.modifier("offset").int_value() if stmt.modifier("offset") else 0
                for n, r in enumerate(ops[0].registers()):
                    writes[r] = intern("lds", base, off + 4 * n, epoch)
            elif k in ("lds", "vmem_store") and not any(s.role in ("def", "defuse") for s in slots):
                log.append((name, tuple(m.text for m in stmt.modifiers),
                            tuple(v for o in ops for v in _operand_values(regs, intern, o)), epoch))
                epoch += 1
            elif name in _WIDE_MAD and len(ops) == 5 and ops[4].kind == "vgpr" and ops[0].kind == "vgpr":
                # The low dword of a 64-bit multiply-add depends only on the low dwords of its inputs.
                lo_inputs = tuple(v for o in ops[2:4] for v in _operand_values(regs, intern, o)) + (
                    _value(regs, intern, ops[4].registers()[0]),)
                full = tuple(_value(regs, intern, r) for r in ins.uses)
                d = ops[0].registers()
                writes[d[0]] = intern("op", name + ".lo", (), (), lo_inputs, 0)
                writes[d[1]] = intern("op", name, (), (), full, 1)
                for n, r in enumerate(ins.defs[2:]):
                    writes[r] = intern("op", name, (), (), full, 2 + n)
            elif len(ins.stmts) == 1:
                inputs = tuple(_value(regs, intern, r) for r in ins.uses)
                mods = tuple(m.text for m in stmt.modifiers)
                consts = tuple(o.text for o in ops if not o.is_register)
                for n, r in enumerate(ins.defs):
                    writes[r] = intern("op", name, mods, consts, inputs, n)
            else:  # one half of a VOPD pair: its own operands only
                used = [r for sl in slots if sl.role in ("use", "defuse") for r in sl.regs]
                inputs = tuple(_value(regs, intern, r) for r in used)
                consts = tuple(o.text for o in ops if not o.is_register)
                outs = [r for sl in slots if sl.role in ("def", "defuse") for r in sl.regs]
                for n, r in enumerate(outs):
                    writes[r] = intern("op", name, (), consts, inputs, n)
        regs.update(writes)
        i += 1
    raise AssertionError("symbolic run did not finish")


def assert_equivalent(original: str, rewritten: str, seeds=range(6), bias: float = 0.6):
    pa = Analysis.from_source(parse_text(original, "a.s")).program
    pb = Analysis.from_source(parse_text(rewritten, "b.s")).program
    for seed in seeds:
        rng = random.Random(seed)
        decisions = [rng.random() < bias for _ in range(400)]
        intern = Interner()
        la, na = run(pa, decisions, intern)
        lb, nb = run(pb, decisions, intern)
        assert na == nb, f"seed {seed}: the two programs branch differently"
        assert len(la) == len(lb), f"seed {seed}: {len(la)} stores vs {len(lb)}"
        for n, (x, y) in enumerate(zip(la, lb)):
            assert x == y, f"seed {seed}: store #{n} differs: {x[0]}"
        assert la, "the path stored nothing: the test would prove nothing"


def _rewrite(text: str, path: str = "t.s") -> str:
    analysis = Analysis.from_source(parse_text(text, path))
    return apply(analysis, {"loop": None}).text


@pytest.mark.skipif(not KERNEL5.is_file(), reason="../shared/corpus/kernel5.s is not present")
def test_kernel5_rewrite_is_dataflow_equivalent():
    original = KERNEL5.read_text()
    assert_equivalent(original, _rewrite(original, str(KERNEL5)), seeds=range(4))


@pytest.mark.parametrize("name", ["gemm_lds_padded.s", "gmem_chained.s", "gmem_sgpr_base.s", "gemm_register_tiled.s",
                                  "gemm_register_tiled.hipcc.s", "gemm_double_buffered.s", "gemm_spill.s"])
def test_fixture_rewrite_is_dataflow_equivalent(name):
    original = (KERNELS / name).read_text()
    assert_equivalent(original, _rewrite(original, name), seeds=range(3))


def test_the_checker_sees_a_wrong_register():
    """The symbolic check itself must fail on a broken rewrite (one FMA source swapped)."""
    original = (KERNELS / "gmem_sgpr_base.s").read_text()
    good = _rewrite(original, "gmem_sgpr_base.s")
    lines = good.splitlines(True)
    n = next(k for k, ln in enumerate(lines) if "v_dual_fmac_f32" in ln and "::" in ln
             and k > next(j for j, l2 in enumerate(lines) if "ds_load_b64" in l2))
    x, y = lines[n].split("::")
    # swap the X half's sources with the Y half's second source: a different product
    parts = x.split(",")
    parts[2] = " " + y.split(",")[2].strip()
    lines[n] = ",".join(parts) + " ::" + y
    bad = "".join(lines)
    with pytest.raises(AssertionError):
        assert_equivalent(original, bad, seeds=range(2))


SNIPPET = """\
\tv_mov_b32_e32 v{a0}, 0
\tv_mov_b32_e32 v{a1}, 0
\tv_mov_b32_e32 v{a2}, 0
\tv_mov_b32_e32 v{a3}, 0
\ts_mov_b32 s0, 0
.LBB0_1:
\tds_load_b64 v[20:21], v1
\tds_load_b64 v[22:23], v2 offset:16
\ts_add_i32 s0, s0, 1
\ts_cmp_lg_u32 s0, 8
\ts_waitcnt lgkmcnt(0)
\tv_fmac_f32_e32 v{a0}, v20, v22
\tv_fmac_f32_e32 v{a1}, v20, v23
\tv_fmac_f32_e32 v{a2}, v21, v22
\tv_fmac_f32_e32 v{a3}, v21, v23
\ts_cbranch_scc1 .LBB0_1
\tglobal_store_b128 v[4:5], v[10:13], off
\ts_endpgm
"""


@pytest.mark.parametrize("accs", [(10, 11, 12, 13), (10, 12, 11, 13), (13, 12, 11, 10), (11, 13, 10, 12)])
def test_small_loop_keeps_the_store_contiguous(accs):
    """Whatever registers the pass gives the accumulators, the b128 store after the loop reads
    the right values from v[10:13]: the moves back are checked by the symbolic run."""
    text = SNIPPET.format(a0=accs[0], a1=accs[1], a2=accs[2], a3=accs[3])
    new = _rewrite(text)
    assert "v_fmac_f32" not in new
    assert new.count("v_dual_fmac_f32 ") == 4  # two lines, two halves each
    assert "global_store_b128 v[4:5], v[10:13], off" in new
    assert_equivalent(text, new, seeds=range(8))


def test_small_loop_without_zero_init_moves_on_entry():
    text = SNIPPET.format(a0=10, a1=12, a2=11, a3=13).replace("v_mov_b32_e32 v12, 0", "v_mov_b32_e32 v12, v7")
    new = _rewrite(text)
    assert_equivalent(text, new, seeds=range(8))


def test_refusal_leaves_nothing_half_done():
    text = SNIPPET.format(a0=10, a1=11, a2=12, a3=13).replace(
        "\ts_cbranch_scc1", "\tv_add_f32_e32 v11, v11, v9\n\ts_cbranch_scc1")
    with pytest.raises(FixRefused, match="accumulator v11 is also used"):
        _rewrite(text)


BRANCHY = """\
\tv_mov_b32_e32 v10, v6
\tv_mov_b32_e32 v11, v7
\tv_mov_b32_e32 v12, v8
\tv_mov_b32_e32 v13, v9
\ts_mov_b32 s0, 0
\ts_cmp_eq_u32 s5, 0
\ts_cbranch_scc1 .LBB0_1
\ts_branch .LBB0_2
.LBB0_1:
\tds_load_b64 v[20:21], v1
\tds_load_b64 v[22:23], v2 offset:16
\ts_add_i32 s0, s0, 1
\ts_cmp_lg_u32 s0, 8
\ts_waitcnt lgkmcnt(0)
\tv_fmac_f32_e32 v10, v20, v22
\tv_fmac_f32_e32 v11, v20, v23
\tv_fmac_f32_e32 v13, v21, v22
\tv_fmac_f32_e32 v12, v21, v23
\ts_cbranch_scc1 .LBB0_1
.LBB0_2:
\tglobal_store_b128 v[4:5], v[10:13], off
\ts_endpgm
"""


def test_moves_on_branch_edges():
    """The loop is entered by a conditional branch (moves in a trampoline after the kernel) and
    left by falling into a block that is also reached from outside (moves before its label).
    v10 and v12 multiply a0*b0 and a1*b1, which one dual instruction computes: one must move."""
    new = _rewrite(BRANCHY)
    assert ".Lisalint_dfmac_0_LBB0_1:" in new
    assert "s_cbranch_scc1 .Lisalint_dfmac_0_LBB0_1" in new
    assert new.index(".LBB0_2:") > new.rindex("s_cbranch_scc1 .LBB0_1")
    assert_equivalent(BRANCHY, new, seeds=range(12))


def _run_moves(lines: list[str], regs: dict[int, object]) -> dict[int, object]:
    """Execute v_mov_b32 / v_dual_mov_b32 lines (both VOPD halves read before either writes)."""
    from isalint.parse.source import parse_statements

    regs = dict(regs)
    for line in lines:
        stmts = parse_statements(line.strip())
        reads = []
        for st in stmts:
            dst, src = st.operands
            reads.append((dst.first, regs.get(src.first, ("init", src.first)) if src.kind == "vgpr" else src.text))
        for d, v in reads:
            regs[d] = v
    return regs


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=24, unique=True), st.randoms(use_true_random=False))
def test_parallel_moves_sequentialize_correctly(dsts, rnd):
    """Any parallel copy (chains, cycles, constants) comes out right, paired or not."""
    from isalint.fixes.toolkit.moves import move_lines, sequential_moves

    srcs = list(dsts)
    rnd.shuffle(srcs)  # a permutation of the destinations: cycles
    moves = {d: s for d, s in zip(dsts, srcs)}
    if rnd.random() < 0.5:  # and some chains from outside the set, and constants
        for d in rnd.sample(range(41, 60), 3):
            moves[d] = rnd.choice(dsts) if rnd.random() < 0.7 else "0"
    start = {r: ("init", r) for r in range(64)}
    expect = dict(start)
    for d, s in moves.items():
        expect[d] = start[s] if isinstance(s, int) else s
    lines = move_lines("\t", sequential_moves(moves, [62, 63]))
    got = _run_moves(lines, start)
    for d in moves:
        assert got[d] == expect[d], (d, moves, lines)
    for r in range(62):
        if r not in moves:
            assert got[r] == start[r]
    assert all(("::" not in ln) or _legal_pair(ln) for ln in lines)


def _legal_pair(line: str) -> bool:
    from isalint.parse.source import parse_statements
    from isalint.hw.vopd import is_legal

    x, y = parse_statements(line.strip())
    return is_legal(x, y)
