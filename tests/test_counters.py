"""The RDNA3 counter model (isalint.model.counters) on small programs and on kernel5."""
from __future__ import annotations

from isalint.analysis import Analysis
from isalint.model.counters import (CounterState, Event, analyze, events, lds_free_flat, may_touch_lds,
                                    plan_loop_waits, plan_waits)
from isalint.model.waitcnt import wait_thresholds
from isalint.parse.source import parse_text

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"\nkernel:\n'


def program(body: str):
    return Analysis.from_source(parse_text(HEAD + body, "t.s")).program


def instr(text: str):
    return program(f"\t{text}\n\ts_endpgm\n").instrs[0]


def test_events_classify_memory_ops():
    assert [(e.counter, e.cls, e.writes) for e in events(instr("global_load_b64 v[4:5], v[2:3], off"))] == [
        ("vmcnt", "vmem", ("v4", "v5"))]
    assert [(e.counter, e.cls) for e in events(instr("global_store_b32 v[2:3], v1, off"))] == [("vscnt", "store")]
    # a FLAT load counts on both counters, in order with the vector-memory loads and the LDS ops
    # (gfx10+); it holds its destination on lgkmcnt only while the program may touch LDS
    flat = instr("flat_load_b32 v4, v[2:3]")
    assert [(e.counter, e.cls, e.writes) for e in events(flat)] == [
        ("vmcnt", "vmem", ("v4",)), ("lgkmcnt", "lds", ("v4",))]
    assert [(e.counter, e.cls, e.writes) for e in events(flat, flat_lds=False)] == [
        ("vmcnt", "vmem", ("v4",)), ("lgkmcnt", "lds", ())]
    assert [(e.counter, e.cls) for e in events(instr("s_load_b64 s[4:5], s[0:1], 0x0"))] == [("lgkmcnt", "smem")]
    assert [(e.counter, e.cls) for e in events(instr("ds_store_b32 v1, v2"))] == [("lgkmcnt", "lds")]
    assert [(e.counter, e.cls) for e in events(instr("s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)"))] == [
        ("lgkmcnt", "msg")]
    # an atomic returns data (vmcnt) only in its glc form, written with a destination
    assert [(e.counter, e.writes) for e in events(instr("global_atomic_add_u32 v4, v[2:3], v1, off glc"))] == [
        ("vmcnt", ("v4",))]
    assert [e.counter for e in events(instr("global_atomic_add_u32 v[2:3], v1, off"))] == ["vscnt"]
    assert events(instr("v_fmac_f32_e32 v1, v2, v3")) == ()


def test_lds_in_order_k_and_wait():
    p = program("\tds_load_b32 v1, v0\n\tds_load_b32 v2, v0\n\tds_load_b32 v3, v0\n\ts_endpgm\n")
    st = CounterState()
    for ins in p.instrs[:3]:
        st.step(ins)
    ks = {r: pend.k for r, _c, _cls, pend in st.entries() if not r.startswith("@")}
    assert ks == {"v1": 2, "v2": 1, "v3": 0}
    st.wait({"lgkmcnt": 1})
    assert st.regs() == {"v3"}


def test_smem_out_of_order_lds_after_it_still_in_order():
    p = program("\ts_load_b32 s4, s[0:1], 0x0\n\tds_load_b32 v1, v0\n\tds_load_b32 v2, v0\n"
                "\ts_waitcnt lgkmcnt(1)\n\tv_add_f32_e32 v3, v1, v1\n\tv_add_f32_e32 v4, s4, v2\n\ts_endpgm\n")
    result = analyze(p)
    hz = result.hazards
    # v1 is covered by lgkmcnt(1) (v2 is issued after it, in order); s4 and v2 are not
    assert {(h.reg, h.k) for h in hz} == {("s4", 0), ("v2", 0)}
    assert {h.index for h in hz} == {5}


def test_same_stream_load_may_overwrite_but_valu_may_not():
    p = program("\tglobal_load_b32 v1, v[2:3], off\n\tglobal_load_b32 v1, v[2:3], off offset:4\n"
                "\tv_mov_b32_e32 v1, 0\n\ts_endpgm\n")
    hz = analyze(p).hazards
    assert [(h.index, h.reg, h.kind, h.k) for h in hz] == [(2, "v1", "write", 0)]
    # an SMEM load overwriting a register another SMEM load will write: out of order, a hazard
    p = program("\ts_load_b32 s4, s[0:1], 0x0\n\ts_load_b32 s4, s[0:1], 0x4\n\ts_endpgm\n")
    assert [(h.index, h.reg, h.kind) for h in analyze(p).hazards] == [(1, "s4", "write")]


def test_export_data_locked_until_expcnt():
    st = CounterState()
    st.issue(0, Event("expcnt", "exp", (), ("v1", "v2")))
    assert st.check(instr("v_mov_b32_e32 v5, v1"), 1) == []  # reading export data is fine
    hz = st.check(instr("v_mov_b32_e32 v1, 0"), 2)
    assert [(h.reg, h.counter, h.kind, h.k) for h in hz] == [("v1", "expcnt", "write", 0)]
    st.wait({"expcnt": 0})
    assert st.check(instr("v_mov_b32_e32 v1, 0"), 3) == []


def test_loop_back_edge_fixed_point():
    body = ("\ts_mov_b32 s10, 4\n.LBB0_1:\n\tv_add_f32_e32 v31, v30, v31\n\tds_load_b32 v30, v1\n"
            "\ts_add_i32 s10, s10, -1\n\ts_cmp_lg_u32 s10, 0\n\ts_cbranch_scc1 .LBB0_1\n\ts_endpgm\n")
    p = program(body)
    result = analyze(p)
    assert [(h.index, h.reg, h.origin) for h in result.hazards] == [(1, "v30", 2)]
    # the state at the loop header holds the previous iteration's load
    st = result.state_before(1)
    assert "v30" in st.regs()


def test_kernel5_state_and_thresholds(kernel5):
    a = Analysis.from_path(str(kernel5))
    p = a.program
    result = analyze(p)
    assert result.hazards == []
    waits = [ins for ins in p.instrs if ins.klass == "waitcnt"]
    inner = a.cfg.find_loop(".LBB0_9")
    inner_waits = [w for w in waits if a.cfg.loop_of(w.index) is inner]
    # every wait of the inner loop is exactly as loose as the registers allow
    for w in inner_waits:
        (counter, n), = wait_thresholds(w).items()
        assert result.needed_threshold(w.index, counter) == n
        assert result.looser_threshold(w.index, counter) == (False, None)
    # for every wait of the kernel, the looser value WAIT002 asks for is the loosest the registers need
    for w in waits:
        for counter, n in (wait_thresholds(w) or {}).items():
            need = result.needed_threshold(w.index, counter)
            expected = (True, need) if need is None or need > n else (False, None)
            assert result.looser_threshold(w.index, counter) == expected
    # the six ds_load_b128 of the inner loop are in flight at its first wait
    st = result.state_before(inner_waits[0].index)
    lds = sorted(r for r, c, cls, _p in st.entries() if cls == "lds" and not r.startswith("@"))
    assert len(lds) == 24
    # the 16 global loads of %bb.7 are still in flight inside the inner loop (consumed in %bb.11)
    assert {f"v{n}" for n in range(167, 183)} <= st.regs()


def test_plan_waits_recomputes_inner_loop_waits(kernel5):
    """Dropping the inner loop's waits and planning them again gives back the compiler's."""
    a = Analysis.from_path(str(kernel5))
    loop = a.cfg.find_loop(".LBB0_9")
    body = [a.program.instrs[i] for i in a.loop_indices(loop)]
    result = analyze(a.program)
    entry = result.state_before(body[0].index)
    plan = plan_loop_waits(body, entry, keep_existing=False, counters=["lgkmcnt"])
    got = [(body[w.position].lineno, w.thresholds) for w in plan]
    expected = []
    for n, ins in enumerate(body):
        if ins.klass == "waitcnt":
            nxt = next(b for b in body[n + 1:] if b.klass != "waitcnt")
            expected.append((nxt.lineno, wait_thresholds(ins)))
    assert got == expected
    # straight-line: honouring the existing waits, nothing more is needed
    plan, _out = plan_waits(body, entry)
    assert plan == []


def test_lds_d16_load_merges_after_the_earlier_lds_load():
    """ds_load_u16_d16_hi keeps the low half of v10, read when its data returns: LDS returns in
    issue order, so the earlier ds_load_u16 into v10 has landed by then."""
    p = program("\tds_load_u16 v10, v36\n\tds_load_u16_d16_hi v10, v36 offset:64\n"
                "\tds_load_u8_d16 v11, v36\n\tds_load_i8_d16_hi v11, v36 offset:2\n"
                "\ts_waitcnt lgkmcnt(0)\n\tv_add_f32_e32 v12, v10, v11\n\ts_endpgm\n")
    assert analyze(p).hazards == []
    # a scalar load's register is another stream: an LDS d16 load merging into a VGPR another
    # stream writes still needs the wait
    p = program("\tglobal_load_u16 v10, v[2:3], off\n\tds_load_u16_d16_hi v10, v36\n\ts_endpgm\n")
    assert [(h.index, h.reg, h.counter) for h in analyze(p).hazards] == [(1, "v10", "vmcnt")]


def test_call_waits_in_the_callee():
    p = program("\tglobal_load_b32 v0, v[2:3], off\n\ts_load_b64 s[8:9], s[0:1], 0x0\n"
                "\ts_getpc_b64 s[4:5]\n\ts_swappc_b64 s[30:31], s[4:5]\n"
                "\tv_add_f32_e32 v1, v0, v0\n\tv_mov_b32_e32 v2, s8\n\ts_endpgm\n")
    assert analyze(p).hazards == []
    # the call target itself is read before the call: a pending scalar load of it is a hazard
    p = program("\ts_load_b64 s[4:5], s[0:1], 0x0\n\ts_swappc_b64 s[30:31], s[4:5]\n\ts_endpgm\n")
    assert [(h.index, h.reg) for h in analyze(p).hazards] == [(1, "s4"), (1, "s5")]


def test_barrier_waits_for_lds_not_for_vector_memory():
    body = ("\tbuffer_load_b32 v1, v0, s[4:7], 0 offen\n\tglobal_store_b32 v[2:3], v5, off\n"
            "\ts_barrier\n\ts_waitcnt vmcnt(0)\n\tv_mov_b32_e32 v6, v1\n\ts_endpgm\n")
    assert analyze(program(body)).hazards == []
    hz = analyze(program("\tds_store_b32 v1, v2\n\ts_barrier\n\ts_endpgm\n")).hazards
    assert [(h.index, h.reg, h.counter) for h in hz] == [(1, "@lds", "lgkmcnt")]


def test_flat_in_a_program_without_lds():
    no_lds = program("\tflat_load_b32 v4, v[2:3]\n\ts_waitcnt vmcnt(0)\n\tv_mov_b32_e32 v5, v4\n\ts_endpgm\n")
    assert not may_touch_lds(no_lds)
    assert analyze(no_lds).hazards == []
    # one ds_ instruction, or the shared aperture, and FLAT may reach LDS: lgkmcnt is needed too
    for extra in ("\tds_load_b32 v9, v0\n", "\ts_mov_b32 s9, src_shared_base\n"):
        p = program(extra + "\tflat_load_b32 v4, v[2:3]\n\ts_waitcnt vmcnt(0)\n\tv_mov_b32_e32 v5, v4\n"
                    "\ts_endpgm\n")
        assert may_touch_lds(p)
        assert [(h.reg, h.counter) for h in analyze(p).hazards] == [("v4", "lgkmcnt")], extra
    # the FLAT load after an LDS load is the newer op of one in-order stream: lgkmcnt(1) retires the
    # LDS load, and vmcnt(0) lgkmcnt(0) both
    p = program("\tds_load_b32 v9, v0\n\tflat_load_b32 v4, v[2:3]\n\ts_waitcnt lgkmcnt(1)\n"
                "\tv_mov_b32_e32 v5, v9\n\ts_waitcnt vmcnt(0) lgkmcnt(0)\n\tv_mov_b32_e32 v6, v4\n\ts_endpgm\n")
    assert analyze(p).hazards == []


def _two_kernels(first_body: str, second_body: str, lds: int = 0) -> str:
    out = '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"\n'
    for name, body, size in (("k_lds", first_body, lds), ("k_flat", second_body, 0)):
        out += f"\t.globl {name}\n\t.p2align 8\n\t.type {name},@function\n{name}:\n{body}\ts_endpgm\n"
    for name, size in (("k_lds", lds), ("k_flat", 0)):
        out += (f"\t.rodata\n\t.p2align 6\n\t.amdhsa_kernel {name}\n\t\t.amdhsa_next_free_vgpr 16\n"
                f"\t\t.amdhsa_next_free_sgpr 16\n\t\t.amdhsa_group_segment_fixed_size {size}\n"
                "\t.end_amdhsa_kernel\n")
    return out


def test_flat_proof_per_kernel():
    """One kernel of the file uses LDS, the other does not: the second one's FLAT loads are proven."""
    flat = "\tflat_load_b32 v4, v[2:3]\n\ts_waitcnt vmcnt(0)\n\tv_mov_b32_e32 v5, v4\n"
    p = Analysis.from_source(parse_text(_two_kernels("\tds_load_b32 v1, v0\n\ts_waitcnt lgkmcnt(0)\n", flat, 1024),
                                        "two.s")).program
    assert may_touch_lds(p)
    flats = [i.index for i in p.instrs if i.opcode == "flat_load_b32"]
    assert lds_free_flat(p) == frozenset(flats)
    assert analyze(p).hazards == []
    # the same FLAT load in the kernel that uses LDS is not proven
    p = Analysis.from_source(parse_text(_two_kernels("\tds_load_b32 v1, v0\n\ts_waitcnt lgkmcnt(0)\n" + flat,
                                                     flat, 1024), "two.s")).program
    first, second = [i.index for i in p.instrs if i.opcode == "flat_load_b32"]
    assert lds_free_flat(p) == {second}
    hz = analyze(p).hazards
    assert [(h.origin, h.reg, h.counter) for h in hz] == [(first, "v4", "lgkmcnt")]
    # a kernel whose descriptor asks for LDS is not proven even without a ds_ instruction
    p = Analysis.from_source(parse_text(_two_kernels(flat, "", 512), "two.s")).program
    assert lds_free_flat(p) == frozenset()
    assert [h.counter for h in analyze(p).hazards] == ["lgkmcnt"]
