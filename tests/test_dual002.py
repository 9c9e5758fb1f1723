"""DUAL002: missed dual-issue, on kernel 5, the kernel-6 fixture and small programs."""
from __future__ import annotations

import pytest
from conftest import KERNELS, all_real_kernels, places

from isalint.analysis import Analysis
from isalint.lint.engine import check_analysis
from isalint.parse.source import parse_text
from isalint.hw.vopd import is_legal


def _dual002(text: str):
    return places(check_analysis(Analysis.from_source(parse_text(text, "t.s")), ["DUAL002"]))


def test_kernel5_reports_the_four_single_fmas_of_the_inner_loop(kernel5):
    analysis = Analysis.from_path(str(kernel5))
    loop = analysis.cfg.find_loop(".LBB0_9")
    lines = {analysis.program.instrs[i].lineno for i in analysis.loop_indices(loop)}
    in_loop = [d for d in check_analysis(analysis, ["DUAL002"]) if d.line in lines]
    # one finding for the loop, its sites the four single FMAs
    assert len(in_loop) == 1 and in_loop[0].severity == "warning"
    assert "4 singles cannot pair as written (up to 2 issue cycles per iteration)" in in_loop[0].message
    found = places(in_loop)
    singles = [analysis.program.instrs[i] for i in analysis.loop_indices(loop)
               if analysis.program.instrs[i].opcode == "v_fmac_f32_e32"]
    assert len(singles) == 4
    assert [d.line for d in found] == [ins.lineno for ins in singles]
    assert all("cannot pair" in d.message for d in found)
    first, second, third, fourth = (d.message for d in found)
    assert "SRC0X and SRC0Y both read bank 0 (v184, v184)" in first and "line 571" in first
    assert "SRC0X and SRC0Y both read bank 0 (v184, v184)" in second and "line 570" in second
    assert "bank 3 (v191, v191)" in third and "bank 3 (v191, v191)" in fourth
    # commuting the sources was tried too
    assert all("commuting the sources gives" in m for m in (first, second, third, fourth))
    # the dual-fmac pass recognises this loop, so the findings are fixable
    assert all(d.fix == "--dual-fmac" for d in found)


def test_kernel5_suggestions_outside_the_loop_are_legal_pairs(kernel5):
    found = [d for d in places(check_analysis(Analysis.from_path(str(kernel5)), ["DUAL002"]))
             if "can issue as" in d.message]
    # straight-line code that runs once per wave: info, however many pairs
    assert len(found) == 6 and all(d.severity == "info" for d in found)
    for d in found:
        x, y = d.message.rsplit("): ", 1)[1].split(" :: ")
        assert is_legal(x, y), d.message


def test_kernel6_style_loop_has_nothing_to_pair():
    for name in ("kernel6_style.s", "kernel6_shared_banks.s"):
        analysis = Analysis.from_path(str(KERNELS / "kernel6_style" / name))
        assert check_analysis(analysis, ["DUAL002"]) == []


def test_boundaries_stop_a_move():
    base = "v_mul_f32_e32 v0, v1, v2\n{between}\nv_add_f32_e32 v3, v4, v5\ns_endpgm\n"
    assert len(_dual002(base.format(between="s_add_u32 s0, s0, 4"))) == 1
    for boundary in ("s_waitcnt lgkmcnt(0)", "s_delay_alu instid0(VALU_DEP_1)", "ds_load_b32 v9, v10",
                     "global_load_b32 v9, v[10:11], off", "s_barrier"):
        assert _dual002(base.format(between=boundary)) == [], boundary


def test_a_dependency_in_between_stops_the_move_unless_one_side_can_go():
    text = "v_mul_f32_e32 v0, v1, v2\nv_mul_f32_e32 v9, v0, v8\nv_add_f32_e32 v3, v4, v5\ns_endpgm\n"
    found = _dual002(text)
    # the middle instruction reads v0, so the first mul cannot go down past it; the add can come up
    assert [d.line for d in found] == [1]
    assert "move line 3 up next to line 1" in found[0].message
    # both directions blocked: the middle instruction reads the first and feeds the second
    text = "v_mul_f32_e32 v0, v1, v2\nv_mul_f32_e32 v4, v0, v8\nv_add_f32_e32 v3, v4, v5\ns_endpgm\n"
    assert all("can issue" not in d.message for d in _dual002(text))


def test_in_a_loop_an_unpairable_single_gets_a_reason():
    text = """s_mov_b32 s0, 0
.LBB0_1:
  v_mul_f32_e32 v6, v186, v187
  v_add_f32_e32 v9, v6, v7
  s_add_i32 s0, s0, 1
  s_cmp_lg_u32 s0, 8
  s_cbranch_scc1 .LBB0_1
  s_endpgm
"""
    found = _dual002(text)
    assert [d.line for d in found] == [3, 4]
    assert all(d.severity == "warning" and "reads v6, written by v_mul_f32_e32" in d.message for d in found)
    assert found[0].finding is found[1].finding  # one loop, one finding


def test_integer_singles_of_a_hot_loop_are_info_and_fma_singles_a_warning():
    """gemm_lds_padded.s: the outer loop's index math (v_add_nc_u32 ...) left single costs over 1% of
    the kernel's VALU issue cycles, but no FMA is among it: info. The inner loop's 4 single FMAs: warning."""
    analysis = Analysis.from_path(str(KERNELS / "gemm_lds_padded.s"))
    found = {d.line: d for d in check_analysis(analysis, ["DUAL002"])}
    outer, inner = found[347], found[468]
    assert outer.severity == "info" and outer.cost["share"] >= 0.01 and len(outer.sites) == 14
    texts = [analysis.program.instrs[next(i.index for i in analysis.program.instrs if i.lineno == s.line)].opcode
             for s in outer.sites]
    assert not any("f32" in t or "fma" in t for t in texts) and "v_add_nc_u32_e32" in texts
    assert inner.severity == "warning" and len(inner.sites) == 4 and inner.fix == "--dual-fmac"


def _scan_move(between, edges, a, b):
    """The meeting rule stated over the instructions between a and b (what _move computes from the
    nearest dependents)."""
    first_down = next((k for k in between if (a, k) in edges), None)
    if first_down is None:
        return None
    last_up = next((k for k in reversed(between) if (k, b) in edges), None)
    return last_up if last_up is not None and last_up >= first_down else None


@pytest.mark.parametrize("path", all_real_kernels(), ids=lambda p: p.name)
def test_move_from_nearest_dependents_equals_the_scan(path):
    from isalint.rules import dual002

    analysis = Analysis.from_path(str(path))
    instrs = analysis.program.instrs
    pairs = 0
    for region, _candidates in dual002._regions(analysis):
        edges, _, first_after, last_before = dual002._edge_index(instrs, region)
        for n, a in enumerate(region):
            for b in region[n + 1:n + 1 + dual002.WINDOW]:
                between = region[n + 1:region.index(b)]
                assert dual002._move(first_after, last_before, a, b) == _scan_move(between, edges, a, b)
                pairs += 1
    wave32 = any(k.wave_size == 32 for k in analysis.program.kernels)  # VOPD is wave32 only
    assert pairs or len(instrs) < 50 or not wave32


@pytest.mark.parametrize("wave32, expected", [(1, 1), (0, 0)])
def test_wave64_kernels_have_no_missed_dual_issue(wave32, expected):
    """VOPD is wave32 only: the same pairable FMAs are a finding in wave32 and nothing in wave64."""
    text = ('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"\n\t.globl k\nk:\n'
            "\tv_fmac_f32_e32 v10, v1, v2\n\tv_fmac_f32_e32 v11, v4, v7\n\ts_endpgm\n"
            f"\t.amdhsa_kernel k\n\t\t.amdhsa_wavefront_size32 {wave32}\n"
            "\t\t.amdhsa_next_free_vgpr 12\n\t\t.amdhsa_next_free_sgpr 0\n\t.end_amdhsa_kernel\n")
    found = check_analysis(Analysis.from_source(parse_text(text, "t.s")), ["DUAL002"])
    assert len(found) == expected


def _best_by_search(options) -> list:
    """The best set of disjoint pairs of ``options`` by trying every set: most pairs, then the
    smallest total distance, then the smallest sorted list of pairs."""
    from itertools import combinations

    edges = sorted(options)
    best = None
    for size in range(len(edges), 0, -1):
        for chosen in combinations(edges, size):
            ends = [v for e in chosen for v in e]
            if len(set(ends)) != len(ends):
                continue
            key = (sum(min(999, b - a) for a, b in chosen), list(chosen))
            if best is None or key < best:
                best = key
        if best is not None:
            return best[1]
    return []


def test_pair_matching_is_the_best_set_of_pairs_on_random_graphs():
    """The matching (augmenting paths with potentials, each search stopped at the nearest free
    partner) agrees with trying every set of pairs, on graphs shaped as DUAL002 builds them
    (an even and an odd destination in every pair, partners within a window)."""
    import random

    from isalint.rules.dual002 import _MATCHINGS, _match

    rng = random.Random(1100)
    for _ in range(300):
        nodes = sorted(rng.sample(range(40), rng.randint(2, 12)))
        parity = {v: rng.randint(0, 1) for v in nodes}
        options = {(a, b): None for n, a in enumerate(nodes) for b in nodes[n + 1:]
                   if parity[a] != parity[b] and b - a <= 12 and rng.random() < 0.6}
        if len(options) > 14:
            options = dict(sorted(options.items())[:14])
        _MATCHINGS.clear()  # each graph matched, not one of the same shape remembered
        assert _match(options) == _best_by_search(options), sorted(options)


def test_legality_classes_find_the_form_the_pairing_finds():
    """The search's shortcut (legality classes of the forms, the dependency rule apart) finds the
    same first legal form as trying each form against every rule, or none when it finds none, on
    random halves with bank, parity, literal, SGPR and dependency clashes."""
    from test_dual001 import random_pairs

    from isalint.hw.vopd import _forms, _pairing, first_legal_form, format_pair, half, legality_class
    from isalint.parse.source import parse_statements
    from isalint.rules.dual002 import _pair_facts

    halves = [half(s) for line in random_pairs(1500, seed=20) for s in parse_statements(line)]
    compared = legal = 0
    for a, b in zip(halves, halves[1:]):
        slow = _pairing(a, b, _forms(a), _forms(b), stop=True)
        (forms_a, id_a, classes_a, writes, _), (forms_b, id_b, classes_b, _, reads) = _pair_facts(a), _pair_facts(b)
        assert [legality_class(f) for f in forms_a] == list(classes_a)
        if id_a is None or id_b is None:
            assert a.problems or b.problems or a.vopd is None or b.vopd is None
            continue
        fast = None if writes is not None and writes in reads else first_legal_form(classes_a, classes_b)
        compared += 1
        assert (fast is not None) == slow.legal, (a.text(), b.text())
        if fast is not None:
            legal += 1
            ia, ib, swap = fast
            x, y = forms_a[ia], forms_b[ib]
            assert (format_pair(y, x) if swap else format_pair(x, y)) == slow.text
    assert compared > 2000 and 0.1 * compared < legal < 0.9 * compared


def test_nearest_pairs_that_cover_the_graph_are_the_best_set():
    """Graphs whose nearest pairs (``near`` apart, the least distance of the graph) alone pair up
    all vertices but at most one, with farther options around them: the matching takes the nearest
    pairs, the one left out the last of a chain of odd length, as trying every set of pairs does."""
    import random

    from isalint.rules.dual002 import _MATCHINGS, _match

    rng = random.Random(11)
    covered = 0
    for _ in range(400):
        near = rng.choice([1, 2, 3])
        # chains v, v + near, ... (the side of a vertex alternates along its chain), gaps between
        side, chains, start = {}, [], 0
        for _ in range(rng.randint(1, 3)):
            chain = [start + near * t for t in range(rng.randint(2, 5))]
            if any(len(c) % 2 for c in chains) and len(chain) % 2:
                chain.pop()  # at most one chain of odd length
            flip = rng.randint(0, 1)
            side.update({v: (t + flip) % 2 for t, v in enumerate(chain)})
            chains.append(chain)
            start = chain[-1] + near + rng.randint(1, 3)
        nodes = sorted(side)
        options = {(c[t], c[t + 1]): None for c in chains for t in range(len(c) - 1)}
        for n, a in enumerate(nodes):
            for b in nodes[n + 1:]:
                if b - a > near and side[a] != side[b] and rng.random() < 0.3 and len(options) < 14:
                    options[(a, b)] = None
        _MATCHINGS.clear()
        best = _best_by_search(options)
        covered += len(best) == len(nodes) // 2
        assert _match(options) == best, sorted(options)
    assert covered > 300
