"""Program model facts on the real kernel5.s and the fixture kernels."""
from __future__ import annotations

import pytest
from conftest import fixture_kernels

from isalint.analysis import Analysis
from isalint.parse import parse_text, read_file


def _analysis(path) -> Analysis:
    return Analysis.from_source(read_file(str(path)))


def test_kernel5_kernel_descriptor_and_metadata(kernel5):
    program = _analysis(kernel5).program
    (k,) = program.kernels
    assert k.name == "kernel"
    assert k.descriptor[".amdhsa_next_free_vgpr"] == 208
    assert k.wave_size == 32 and not k.wgp_mode
    assert [a[".offset"] for a in k.metadata[".args"]] == [0, 8, 16, 24, 28, 32]
    assert k.comment_facts["NumVgprs"][0] == 208
    assert program.instrs[k.first].opcode == "s_clause"
    assert program.instrs[k.last - 1].opcode == "s_endpgm"


def test_kernel5_loops(kernel5):
    analysis = _analysis(kernel5)
    cfg = analysis.cfg
    labels = {cfg.blocks[lp.header].label: lp for lp in cfg.loops}
    assert set(labels) == {".LBB0_6", ".LBB0_9"}
    inner, outer = labels[".LBB0_9"], labels[".LBB0_6"]
    assert inner.parent is outer and inner.depth == 2 and inner.innermost and not outer.innermost
    assert analysis.hot_loop is inner
    body = [analysis.program.instrs[i] for i in inner.indices(cfg)]
    assert sum(ins.opcode == "ds_load_b128" for ins in body) == 6
    assert body[-1].opcode == "s_cbranch_scc1" and body[-1].branch_target() == ".LBB0_9"


def test_kernel5_dependency_graph_of_the_hot_loop(kernel5):
    analysis = _analysis(kernel5)
    loop = analysis.hot_loop
    indices = analysis.loop_indices(loop)
    graph = analysis.depgraph(indices, loop=True)
    instrs = analysis.program.instrs
    loads = [i for i in indices if instrs[i].opcode == "ds_load_b128"]
    first_wait = next(i for i in indices if instrs[i].opcode == "s_waitcnt")
    assert instrs[first_wait].text() == "s_waitcnt lgkmcnt(3)"
    waited = sorted(e.dst for e in graph.edges if e.kind == "WAITS_FOR" and e.src == first_wait)
    assert waited == loads[:3], "lgkmcnt(3) after six in-order LDS loads guarantees the first three"
    first_fma = next(i for i in indices if "fmac" in instrs[i].opcode)
    raw = [e for e in graph.edges if e.kind == "RAW" and e.dst == first_fma and not e.carried]
    assert {(e.src, e.regs) for e in raw} >= {(loads[0], ("v184",)), (loads[2], ("v192",))}
    carried = [e for e in graph.edges if e.carried and e.kind == "RAW" and e.src == first_fma == e.dst]
    assert carried and carried[0].regs == ("v124",), "the accumulator is carried into the next iteration"
    # v204 is the B address and then the last load's destination: a WAR edge protects the address
    war = [e for e in graph.edges if e.kind == "WAR" and "v204" in e.regs and not e.carried]
    assert any(instrs[e.dst].opcode == "ds_load_b128" for e in war)


def test_bare_lines_default_to_gfx1100_and_one_block():
    analysis = Analysis.from_source(parse_text("v_mov_b32 v1, v2\nv_add_f32 v3, v1, v1\n"))
    assert analysis.program.target == "gfx1100"
    assert [k.name for k in analysis.program.kernels] == ["<bare>"]
    assert analysis.cfg.loops == []
    assert analysis.program.instrs[1].uses[:1] == ["v1"]


def test_wave64_and_carry_operands():
    analysis = Analysis.from_source(parse_text(
        "v_add_co_u32 v5, vcc_lo, s10, v5\nv_add_co_ci_u32_e32 v6, vcc_lo, s11, v6, vcc_lo\n"
        "v_cndmask_b32_e32 v1, v2, v3, vcc_lo\ns_cmp_gt_i32 s4, 0\ns_cselect_b32 s13, -1, 0\n"))
    a, b, c, d, e = analysis.program.instrs
    assert "vcc_lo" in a.defs and "vcc_lo" in b.uses and "vcc_lo" in b.defs and "vcc_lo" in c.uses
    assert "scc" in d.defs and "scc" in e.uses


@pytest.mark.parametrize("path", fixture_kernels(), ids=lambda p: p.name)
def test_fixture_kernels_model(path):
    analysis = _analysis(path)
    program = analysis.program
    assert program.target == "gfx1100"
    assert not [ins.text() for ins in program.instrs if ins.opaque]
    # every kernel (a descriptor) has its metadata; a device function (no descriptor) has none
    assert all((k.metadata is not None) == bool(k.descriptor) for k in program.kernels)
    if any(ins.branch_target() for ins in program.instrs):
        for loop in analysis.cfg.loops:
            assert loop.header in loop.blocks and loop.latch in loop.blocks


def test_wave64_lane_masks_and_vcc_exec_pairs():
    from isalint.model.program import build_program

    body = ("\tv_cmp_eq_u32_e64 s[4:5], v1, v2\n\tv_cndmask_b32_e32 v0, v1, v2, vcc\n"
            "\tv_add_co_u32 v3, s[6:7], v1, v2\n\ts_subvector_loop_begin s8, .L1\n.L1:\n\ts_endpgm\n")
    desc = ".amdhsa_kernel k\n\t.amdhsa_wavefront_size32 0\n.end_amdhsa_kernel\n"
    w64 = build_program(parse_text(body + desc, "w64.s"))
    assert w64.wave64 and not any(i.opaque for i in w64.instrs)
    cmp, cnd, add, loop = w64.instrs[:4]
    assert cmp.defs == ["s4", "s5"] and {"exec_lo", "exec_hi"} <= set(cmp.uses)
    assert {"vcc_lo", "vcc_hi", "exec_lo", "exec_hi"} <= set(cnd.uses)
    assert add.defs == ["v3", "s6", "s7"]
    assert loop.defs[0] == "s8" and loop.klass == "branch"
    # the same lines in a wave32 file: the pairs are one register too many
    w32 = build_program(parse_text(body, "w32.s"))
    assert not w32.wave64 and w32.instrs[0].opaque and "s[4:5]" in w32.instrs[0].problem


@pytest.mark.parametrize("wave32, wgp, expected", [(0, 0, (64, False)), (1, 1, (32, True)), (None, None, (32, True))])
def test_a_device_function_runs_as_the_files_kernels(wave32, wgp, expected):
    """clang writes no descriptor for a device function: it takes the wave size and WGP/CU mode the
    file's kernels were compiled with (-mwavefrontsize64, -mcumode), else the hardware defaults."""
    fields = "".join(f"\t\t{k} {v}\n" for k, v in ((".amdhsa_wavefront_size32", wave32),
                                                      (".amdhsa_workgroup_processor_mode", wgp)) if v is not None)
    text = ('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"\n\t.type helper,@function\nhelper:\n'
            "\tv_mov_b32_e32 v0, v1\n\ts_setpc_b64 s[30:31]\n"
            "\t.globl k\n\t.type k,@function\nk:\n\tv_mov_b32_e32 v2, v3\n\ts_endpgm\n"
            f"\t.amdhsa_kernel k\n{fields}\t\t.amdhsa_next_free_vgpr 4\n\t\t.amdhsa_next_free_sgpr 0\n"
            "\t.end_amdhsa_kernel\n")
    program = Analysis.from_source(parse_text(text, "t.s")).program
    kernels = {k.name: k for k in program.kernels}
    assert set(kernels) == {"helper", "k"} and not kernels["helper"].descriptor
    assert (kernels["helper"].wave_size, kernels["helper"].wgp_mode) == expected
    assert (kernels["k"].wave_size, kernels["k"].wgp_mode) == expected


@pytest.mark.parametrize("load", ["buffer_load_d16_b16 v11, v1, s[4:7], 0 offen",
                                  "buffer_load_d16_hi_u8 v11, v1, s[4:7], 0 offen",
                                  "tbuffer_load_d16_format_x v11, v1, s[4:7], 0 format:[BUF_FMT_16_FLOAT] offen",
                                  "global_load_d16_hi_b16 v11, v[2:3], off"])
def test_a_d16_load_reads_the_half_it_keeps(load):
    """A D16 load writes one 16-bit half of its VGPR and keeps the other: the value written before it
    reaches the instruction after it through the load (a RAW edge into the load), and the write
    before it is not dead."""
    from isalint.model.depgraph import build_depgraph
    from isalint.model.liveness import Liveness

    text = ("\t.text\n\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx1100\"\nk:\n\tv_mov_b32_e32 v11, 0\n"
            f"\t{load}\n\ts_waitcnt vmcnt(0)\n\tv_pk_add_f16 v12, v11, v11\n\ts_endpgm\n")
    program = Analysis.from_source(parse_text(text, "d16.s")).program
    assert "v11" in program.instrs[1].uses and "v11" in program.instrs[1].defs
    graph = build_depgraph(program, list(range(len(program.instrs))))
    assert any(e.src == 0 and e.dst == 1 and e.kind == "RAW" and "v11" in e.regs for e in graph.edges)
    assert "v11" in Liveness(program).live_out(0)
