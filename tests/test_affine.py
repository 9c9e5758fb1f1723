"""The affine evaluator (isalint/model/affine) on real address chains.

The addresses it derives from the compiler's VALU chains must be the index expressions of the HIP
sources, the widenings it cannot prove must come back as conditions, and the loop counters and
their bounds must come from the loops' branches (SCC and the VCC form of the compiler).
"""
from __future__ import annotations

import random

import pytest
from conftest import KERNELS

from isalint.analysis import Analysis
from isalint.model.affine.evaluator import AffineEvaluator
from isalint.model.affine.loops import counter
from isalint.model.affine.poly import Poly
from isalint.parse.source import parse_text, read_file

GMEM_CHAINED = KERNELS / "gmem_chained.s"


def loop_loads(analysis):
    program, cfg = analysis.program, analysis.cfg
    loads = [i for i, ins in enumerate(program.instrs) if ins.opcode == "global_load_b32" and cfg.loop_of(i)]
    return cfg.loop_of(loads[0]), loads


def evaluator(path):
    a = Analysis.from_source(read_file(str(path)))
    loop, loads = loop_loads(a)
    return a, AffineEvaluator(a.program, a.program.kernels[0], loop), loop, loads


def atom_named(ev, offset=None, counter=False) -> str:
    """The atom of the kernel argument at ``offset``, or the loop counter."""
    for name, atom in ev.atoms.items():
        if (counter and atom.kind == "counter") or (offset is not None and atom.arg.get("offset") == offset):
            return name
    raise AssertionError(f"no atom for offset {offset} / counter {counter}")


def value(ev, poly: Poly, env: dict, t: int) -> int:
    full = dict(env)
    for name, atom in ev.atoms.items():
        if atom.kind == "lane":
            full[name] = atom.values[t]
    return poly.evaluate(full)


def source_addresses(k0, n, wg_x, wg_y, t, a, b):
    """The 16 addresses of the loop's loads per the HIP sources (gmem_chained.hip, kernel5_lds_optim.cpp)."""
    out = [b + 4 * ((k0 + 8 + i) * n + 128 * wg_x + t) for i in range(8)]
    out += [a + 4 * ((128 * wg_y + t // 8 + 16 * i) * n + k0 + 8 + t % 8) for i in range(8)]
    return out


def check_source_indices(path):
    a, ev, loop, loads = evaluator(path)
    addrs = [ev.address(i) for i in loads]
    assert all(w.known for w in addrs), [w.reason for w in addrs]
    n = atom_named(ev, offset=24)
    pa, pb = atom_named(ev, offset=0), atom_named(ev, offset=8)
    k0 = atom_named(ev, counter=True)
    rng = random.Random(5)
    for _ in range(200):
        env = {n: rng.randrange(1, 46000), "wg_x": rng.randrange(0, 300), "wg_y": rng.randrange(0, 300),
               k0: 8 * rng.randrange(0, 5000), pa: rng.randrange(0, 1 << 48), pb: rng.randrange(0, 1 << 48)}
        t = rng.randrange(0, 128)
        want = source_addresses(env[k0], env[n], env["wg_x"], env["wg_y"], t, env[pa], env[pb])
        got = [value(ev, w.poly, env, t) for w in addrs]
        assert got == want
    return a, ev, loop, loads, addrs


def test_poly_is_exact_integer_arithmetic():
    n, s = Poly.atom("N"), Poly.atom("s")
    p = (n + 1) * (n - 1) + s * 3
    assert p == n * n + s * 3 - 1
    assert p.degree("N") == 2 and p.coefficient("s") == Poly.const(3)
    assert p.evaluate({"N": 1 << 20, "s": 5}) == (1 << 40) - 1 + 15  # no 32-bit wrap
    assert (p + (1 << 32)).congruent(p, 32) and not (p + (1 << 31)).congruent(p, 32)
    assert p.substitute({"s": n}).render({"N": "n"}) == "n*n + 3*n - 1"


def test_gmem_chained_addresses_are_the_sources_indices():
    check_source_indices(GMEM_CHAINED)


def test_kernel5_addresses_are_the_sources_indices(kernel5):
    check_source_indices(kernel5)


def test_sign_extensions_come_back_as_int32_conditions():
    a, ev, loop, loads, addrs = check_source_indices(GMEM_CHAINED)
    n = atom_named(ev, offset=24)
    k0 = atom_named(ev, counter=True)
    first_b = addrs[0]
    index = Poly.atom(n) * Poly.atom(k0) + Poly.atom(n) * 8 + Poly.atom("wg_x") * 128 + Poly.atom("tid")
    conds = {(c.poly, c.lo, c.hi, c.kind) for c in first_b.conds}
    assert (index, -(1 << 31), (1 << 31) - 1, "index") in conds


def test_counters_and_their_bounds_from_scc_and_vcc_branches(kernel5):
    # kernel5 continues its loop on s_cmp_ge_i32 + s_cbranch_scc1 (fall-through); gmem_chained on
    # s_cselect_b32 -1, 0 / s_and_not1_b32 vcc_lo, exec_lo / s_cbranch_vccz
    for path, reg in ((kernel5, "s12"), (GMEM_CHAINED, "s14")):
        a, ev, loop, loads = evaluator(path)
        for i in loads:
            ev.address(i)
        name = atom_named(ev, counter=True)
        c = counter(ev, loop, name)
        n = atom_named(ev, offset=24)
        assert (c.reg, c.init, c.step, c.bound) == (reg, 0, 8, Poly.atom(n) - 1)


def test_a_counter_without_a_bounding_branch_is_reported():
    text = GMEM_CHAINED.read_text()
    # the back edge taken whatever s12 is: the loop no longer bounds its counter
    text = text.replace("\ts_cbranch_vccz .LBB0_5\n", "\ts_branch .LBB0_5\n", 1)
    a = Analysis.from_source(parse_text(text, str(GMEM_CHAINED)))
    loop, loads = loop_loads(a)
    ev = AffineEvaluator(a.program, a.program.kernels[0], loop)
    ev.address(loads[0])
    assert counter(ev, loop, atom_named(ev, counter=True)) == "no branch bounds s14 on the way around the loop"


def test_or_of_overlapping_uniform_and_lane_bits_is_not_guessed():
    text = GMEM_CHAINED.read_text()
    assert "\tv_or_b32_e32 v1, s3, v0\n" in text
    for src, known in (("s3", True), ("s4", False)):
        mutated = text.replace("\tv_or_b32_e32 v1, s3, v0\n", f"\tv_or_b32_e32 v1, {src}, v0\n", 1)
        a = Analysis.from_source(parse_text(mutated, str(GMEM_CHAINED)))
        loop, loads = loop_loads(a)
        ev = AffineEvaluator(a.program, a.program.kernels[0], loop)
        w = ev.address(loads[0])
        assert w.known == known
        if not known:
            assert "may overlap" in w.reason


@pytest.mark.parametrize("line,reason", [
    # a product of the counter with itself is still a polynomial, evaluated exactly
    ("v_mad_u64_u32 v[137:138], null, s12, s12, v[1:2]", None),
    # an address read from memory is not
    ("global_load_b64 v[137:138], v[1:2], off", "loaded from memory"),
])
def test_what_the_evaluator_follows(line, reason):
    text = GMEM_CHAINED.read_text()
    old = "\tv_mad_u64_u32 v[137:138], null, s12, s4, v[1:2]\n"
    assert old in text
    a = Analysis.from_source(parse_text(text.replace(old, f"\t{line}\n", 1), str(GMEM_CHAINED)))
    loop, loads = loop_loads(a)
    ev = AffineEvaluator(a.program, a.program.kernels[0], loop)
    w = ev.address(loads[0])
    if reason is None:
        k0 = atom_named(ev, counter=True)
        assert w.known and w.poly.degree(k0) == 2
    else:
        assert not w.known and reason in w.reason


def test_a_vgpr_the_loop_advances_is_tied_to_the_loop_counter():
    # gemm_double_buffered advances the B row index in v80 by 8*N per iteration beside the counter s12
    # (+8, from 8): v80 = its value on entry + N * (s12 - 8), so its loads are the source's next_a/next_b
    # indices with k0 = s12 - 8
    path = KERNELS / "gemm_double_buffered.s"
    a, ev, loop, loads = evaluator(path)
    addrs = [ev.address(i) for i in loads]
    assert all(w.known for w in addrs), [w.reason for w in addrs]
    n, pa, pb = atom_named(ev, offset=24), atom_named(ev, offset=0), atom_named(ev, offset=8)
    k0 = atom_named(ev, counter=True)
    c = counter(ev, loop, k0)
    assert (c.reg, c.init, c.step) == ("s12", 8, 8)
    rng = random.Random(7)
    for _ in range(100):
        env = {n: rng.randrange(1, 46000), "wg_x": rng.randrange(0, 300), "wg_y": rng.randrange(0, 300),
               k0: 8 + 8 * rng.randrange(0, 5000), pa: rng.randrange(0, 1 << 48), pb: rng.randrange(0, 1 << 48)}
        t = rng.randrange(0, 256)
        kk, nn = env[k0] - 8, env[n]
        want = [env[pa] + 4 * ((128 * env["wg_y"] + t // 8 + 32 * i) * nn + kk + 8 + t % 8) for i in range(4)]
        want += [env[pb] + 4 * ((kk + 8 + t // 128 + 2 * i) * nn + 128 * env["wg_x"] + t % 128) for i in range(4)]
        assert sorted(value(ev, w.poly, env, t) for w in addrs) == sorted(want)
