"""Memory instructions: LDS (every width and offset form), global (both address forms), scratch,
scalar loads, exec masking, and the late-completion model (missing waits must show)."""
from __future__ import annotations

import numpy as np
import pytest

from isalint.validate.emu import EmulationError
from isalint.validate.emu.harness import buffer
from test_emu_support import Bench

B = Bench()
LANE = np.arange(32, dtype=np.uint32)


def _lds_image(size=2048, seed=5):
    return np.random.default_rng(seed).integers(0, 256, size=size, dtype=np.uint8)


def _read(mem: np.ndarray, addr: int, n: int) -> int:
    return int.from_bytes(mem[addr:addr + n].tobytes(), "little")


@pytest.mark.parametrize("kind,n,signed", [("b32", 4, False), ("b64", 8, False), ("b96", 12, False),
                                           ("b128", 16, False), ("u8", 1, False), ("i8", 1, True),
                                           ("u16", 2, False), ("i16", 2, True)])
@pytest.mark.parametrize("offset", [0, 4, 60, 1020])
def test_ds_load_widths_and_offsets(kind, n, signed, offset):
    img = _lds_image()
    addr = (LANE * 16 + 3 * (n < 4)).astype(np.uint32)  # sub-dword loads at unaligned addresses
    ndw = max(1, n // 4)
    dst = f"v[10:{9 + ndw}]" if ndw > 1 else "v10"
    st = B.run(f"ds_load_{kind} {dst}, v0 offset:{offset}\ns_waitcnt lgkmcnt(0)", vgprs={0: addr}, lds=img)
    for lane in range(32):
        raw = _read(img, int(addr[lane]) + offset, n)
        if signed and raw >> (8 * n - 1):
            raw -= 1 << (8 * n)
        raw &= (1 << (32 * ndw)) - 1
        got = sum(int(st.v(10 + k)[lane]) << (32 * k) for k in range(ndw))
        assert got == raw, (lane, kind)


@pytest.mark.parametrize("kind,n", [("b8", 1), ("b16", 2), ("b32", 4), ("b64", 8), ("b96", 12), ("b128", 16)])
def test_ds_store_widths_exec_masked(kind, n):
    img = _lds_image()
    ndw = max(1, n // 4)
    data = {10 + k: (LANE * 0x01010101 + k * 0x10203) & 0xFFFF_FFFF for k in range(ndw)}
    src = f"v[10:{9 + ndw}]" if ndw > 1 else "v10"
    addr = LANE * 20 + 2
    ex = 0x5555_5555
    st = B.run(f"ds_store_{kind} v0, {src} offset:100\ns_waitcnt lgkmcnt(0)", vgprs={0: addr, **data}, lds=img,
               exec_mask=ex)
    want = img.copy()
    for lane in range(32):
        if (ex >> lane) & 1:
            val = sum(int(data[10 + k][lane]) << (32 * k) for k in range(ndw)) & ((1 << (8 * n)) - 1)
            a = int(addr[lane]) + 100
            want[a:a + n] = np.frombuffer(val.to_bytes(n, "little"), np.uint8)
    assert np.array_equal(st.lds[:img.size], want)


@pytest.mark.parametrize("op,size,stride", [("ds_load_2addr_b32", 4, 1), ("ds_load_2addr_b64", 8, 1),
                                            ("ds_load_2addr_stride64_b32", 4, 64),
                                            ("ds_load_2addr_stride64_b64", 8, 64)])
def test_ds_load_2addr(op, size, stride):
    img = _lds_image(size=8 * 1024 * 2)
    addr = LANE * 8
    o0, o1 = 3, 17
    ndw = size // 4
    st = B.run(f"{op} v[10:{9 + 2 * ndw}], v0 offset0:{o0} offset1:{o1}\ns_waitcnt lgkmcnt(0)",
               vgprs={0: addr}, lds=img)
    for lane in range(32):
        for part, off in enumerate((o0, o1)):
            want = _read(img, int(addr[lane]) + off * size * stride, size)
            got = sum(int(st.v(10 + part * ndw + k)[lane]) << (32 * k) for k in range(ndw))
            assert got == want


@pytest.mark.parametrize("op,size,stride", [("ds_store_2addr_b32", 4, 1), ("ds_store_2addr_stride64_b32", 4, 64),
                                            ("ds_store_2addr_b64", 8, 1)])
def test_ds_store_2addr(op, size, stride):
    img = np.zeros(8192, np.uint8)
    ndw = size // 4
    d0 = f"v[2:{1 + ndw}]" if ndw > 1 else "v2"
    d1 = f"v[4:{3 + ndw}]" if ndw > 1 else "v4"
    vals = {2: LANE + 1000, 3: LANE + 2000, 4: LANE + 3000, 5: LANE + 4000}
    pitch = 4 if stride == 64 else 128  # no two lanes' bytes overlap
    st = B.run(f"{op} v0, {d0}, {d1} offset0:1 offset1:9\ns_waitcnt lgkmcnt(0)", vgprs={0: LANE * pitch, **vals},
               lds=img)
    for lane in range(32):
        base = lane * pitch
        a0, a1 = base + 1 * size * stride, base + 9 * size * stride
        assert _read(st.lds, a0, 4) == 1000 + lane and _read(st.lds, a1, 4) == 3000 + lane
        if ndw == 2:
            assert _read(st.lds, a0 + 4, 4) == 2000 + lane and _read(st.lds, a1 + 4, 4) == 4000 + lane


def test_kernel5_style_stride64_store_offsets():
    # ds_store_2addr_stride64_b32 v8, v23, v24 offset0:16 offset1:18: 16*256 and 18*256 bytes
    st = B.run("ds_store_2addr_stride64_b32 v0, v1, v2 offset0:16 offset1:18\ns_waitcnt lgkmcnt(0)",
               vgprs={0: LANE * 4, 1: 11, 2: 22}, lds=np.zeros(8320, np.uint8))
    assert _read(st.lds, 16 * 256, 4) == 11 and _read(st.lds, 18 * 256 + 124, 4) == 22


def test_lds_out_of_range_is_an_error():
    with pytest.raises(EmulationError, match="LDS address .* outside the workgroup's 256 bytes"):
        B.run("ds_load_b32 v1, v0 offset:8", vgprs={0: LANE * 8}, lds=np.zeros(256, np.uint8))


# ----------------------------------------------------------------------------- late completion

def test_load_result_lands_only_when_waited_for():
    img = np.arange(512, dtype=np.uint32).view(np.uint8)
    body = "ds_load_b32 v1, v0\nv_mov_b32_e32 v2, v1\ns_waitcnt lgkmcnt(0)\nv_mov_b32_e32 v3, v1"
    st = B.run(body, vgprs={0: LANE * 4, 1: 7}, lds=img, latency=None)
    assert list(st.v(2)) == [7] * 32  # read before the wait: the stale register
    assert list(st.v(3)) == list(range(32))


def test_missing_wait_reads_stale_register_with_random_latency():
    img = np.arange(512, dtype=np.uint32).view(np.uint8)
    body = "ds_load_b32 v1, v0\n" + "s_nop 0\n" * 5 + "v_mov_b32_e32 v2, v1\ns_waitcnt lgkmcnt(0)"
    st = B.run(body, vgprs={0: LANE * 4, 1: 7}, lds=img, latency=(64, 4096))
    assert list(st.v(2)) == [7] * 32
    st = B.run(body, vgprs={0: LANE * 4, 1: 7}, lds=img, latency=(0, 0))  # an instant memory hides nothing
    assert list(st.v(2)) == list(range(32))


def test_counter_completes_in_order():
    img = np.arange(512, dtype=np.uint32).view(np.uint8)
    body = ("ds_load_b32 v1, v0\nds_load_b32 v2, v0 offset:128\nds_load_b32 v3, v0 offset:256\n"
            "s_waitcnt lgkmcnt(1)\nv_mov_b32_e32 v4, v1\nv_mov_b32_e32 v5, v2\nv_mov_b32_e32 v6, v3\n"
            "s_waitcnt lgkmcnt(0)")
    st = B.run(body, vgprs={0: LANE * 4, 1: 0, 2: 0, 3: 0}, lds=img, latency=None)
    assert list(st.v(4)) == list(range(32)) and list(st.v(5)) == list(range(32, 64))
    assert list(st.v(6)) == [0] * 32 and list(st.v(3)) == list(range(64, 96))


def test_late_load_overwrites_a_register_written_meanwhile():
    img = np.arange(512, dtype=np.uint32).view(np.uint8)
    st = B.run("ds_load_b32 v1, v0\nv_mov_b32_e32 v1, 5\ns_waitcnt lgkmcnt(0)", vgprs={0: LANE * 4}, lds=img,
               latency=None)
    assert list(st.v(1)) == list(range(32))


def test_own_wave_store_then_load_sees_the_store():
    st = B.run("ds_store_b32 v0, v1\nds_load_b32 v2, v0\ns_waitcnt lgkmcnt(0)",
               vgprs={0: LANE * 4, 1: LANE + 500}, lds=np.zeros(256, np.uint8), latency=None)
    assert list(st.v(2)) == list(range(500, 532))


@pytest.mark.parametrize("wait", [True, False])
def test_store_pending_at_barrier_is_invisible_to_other_waves(wait):
    body = ("s_cmp_eq_u32 s8, 0\ns_cbranch_scc0 .Lreader\nds_store_b32 v0, v1\n.Lreader:\n"
            + ("s_waitcnt lgkmcnt(0)\n" if wait else "") + "s_barrier\nds_load_b32 v2, v0\ns_waitcnt lgkmcnt(0)")
    st = B.run(body, waves=2, sgprs={8: np.array([0, 1])}, vgprs={0: LANE * 4, 1: LANE + 900, 2: 0},
               lds=np.zeros(128, np.uint8), latency=(64, 4096))
    reader = list(st.v(2)[1])
    assert (reader == list(range(900, 932))) == wait


def test_lockstep_waves_do_not_see_each_others_pending_stores():
    # both waves store (their own lanes' halves) and read the other half after a barrier with no wait
    body = "ds_store_b32 v0, v1\ns_barrier\nds_load_b32 v2, v3\ns_waitcnt lgkmcnt(0)"
    addr = np.stack([LANE * 4, LANE * 4 + 128])
    other = np.stack([LANE * 4 + 128, LANE * 4])
    st = B.run(body, waves=2, vgprs={0: addr, 1: np.stack([LANE + 1, LANE + 101]), 2: 0, 3: other},
               lds=np.zeros(256, np.uint8), latency=None)
    assert list(st.v(2)[0]) == [0] * 32 and list(st.v(2)[1]) == [0] * 32


# ----------------------------------------------------------------------------- global / scratch / smem

def test_global_load_store_both_address_forms():
    a = np.arange(64, dtype=np.float32)
    body = ("global_load_b32 v4, v[0:1], off offset:8\n"
            "global_load_b64 v[6:7], v2, s[10:11] offset:-8\n"
            "s_waitcnt vmcnt(0)\n"
            "global_store_b32 v[0:1], v4, off offset:128\n"
            "global_store_b64 v2, v[6:7], s[10:11] offset:4\n"
            "s_waitcnt_vscnt null, 0x0")
    st = B.run(body, buffers={"a": a}, vgprs={0: buffer("a", LANE * 4), 2: LANE * 4 + 16},
               sgprs={10: buffer("a")})
    out = st.buffers["a"].view(np.float32)
    assert np.array_equal(st.v(4, np.float32), a[2:34])
    assert np.array_equal(st.v(6, np.float32), a[2:34]) and np.array_equal(st.v(7, np.float32), a[3:35])
    # the two stores overlap; the later one wins where both wrote
    want = a.copy()
    want[32:64] = a[2:34]
    for lane in range(32):
        want[5 + lane: 7 + lane] = a[2 + lane:4 + lane]
    assert np.array_equal(out[5:38], want[5:38])


def test_global_subdword_and_exec():
    a = np.arange(256, dtype=np.uint8)
    st = B.run("global_load_i8 v4, v[0:1], off\nglobal_load_u16 v5, v[0:1], off offset:1\ns_waitcnt vmcnt(0)\n"
               "global_store_b8 v[0:1], v6, off offset:200\ns_waitcnt_vscnt null, 0x0",
               buffers={"a": a + np.uint8(120)}, vgprs={0: buffer("a", LANE), 4: 0, 6: 0xABCD}, exec_mask=0xFFFF)
    raw = (a + np.uint8(120)).astype(np.int64)
    assert list(st.v(4, np.int32)[:16]) == [int(v) - 256 if v >= 128 else int(v) for v in raw[:16]]
    assert list(st.v(5)[:16]) == [int(raw[i + 1]) | int(raw[i + 2]) << 8 for i in range(16)]
    assert list(st.buffers["a"][200:216]) == [0xCD] * 16 and st.buffers["a"][216] == (216 + 120) % 256


def test_global_store_outside_every_buffer_faults():
    with pytest.raises(EmulationError, match="global store at address .* outside every buffer"):
        B.run("global_store_b32 v[0:1], v2, off offset:256\ns_waitcnt_vscnt null, 0x0",
              buffers={"a": np.zeros(64, np.uint8)}, vgprs={0: buffer("a", LANE * 4), 2: 1})


def test_global_load_past_a_buffer_reads_garbage_with_a_note():
    st = B.run("global_load_b32 v2, v[0:1], off offset:64\ns_waitcnt vmcnt(0)",
               buffers={"a": np.zeros(64, np.uint8)}, vgprs={0: buffer("a", LANE * 4)})
    assert st.notes and "outside every buffer" in st.notes[0]


def test_scratch_is_private_per_lane():
    body = ("scratch_store_b32 off, v1, off offset:8\nscratch_store_b32 v0, v2, off offset:12\n"
            "scratch_load_b32 v3, off, off offset:8\nscratch_load_b32 v4, off, off offset:12\ns_waitcnt vmcnt(0)")
    st = B.run(body, waves=2, vgprs={0: 0, 1: LANE + np.array([[0], [100]]), 2: LANE * 3}, private=64,
               latency=None)
    assert list(st.v(3)[1]) == list(range(100, 132)) and list(st.v(4)[0]) == [3 * i for i in range(32)]


def test_scratch_out_of_range_faults():
    with pytest.raises(EmulationError, match="scratch address"):
        B.run("scratch_load_b32 v3, off, off offset:64", private=64)


def test_scalar_loads():
    k = np.arange(16, dtype=np.uint32) * 3
    st = B.run("s_load_b32 s20, s[0:1], 0x4\ns_load_b64 s[22:23], s[0:1], 0x8\ns_load_b128 s[24:27], s[0:1], 0x10\n"
               "s_mov_b32 s30, s20\ns_waitcnt lgkmcnt(0)", buffers={"k": k}, sgprs={0: buffer("k"), 20: 99},
               latency=None)
    assert st.s(20) == 3 and st.s(22) == 6 and st.s(23) == 9 and [st.s(24 + i) for i in range(4)] == [12, 15, 18, 21]
    assert st.s(30) == 99  # before the wait the scalar load had not landed


def test_snippets_assemble():
    B.assert_assembles()
