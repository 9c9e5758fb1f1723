"""The emulator on what LLVM-compiled and hand-written kernels use beyond FLAT/GLOBAL: MUBUF loads
and stores through a buffer resource with range checking, cache invalidations, aliased spellings,
and a clear exit 2 for what it does not implement."""
from __future__ import annotations

import re

import numpy as np
import pytest
from click.testing import CliRunner

from isalint.cli import cli
from isalint.validate.emu.harness import buffer
from test_emu_support import FIXTURES, Bench, need_toolchain

B = Bench()
LANE = np.arange(32, dtype=np.uint32)
WGP = FIXTURES / "gemm_lds_tiled.wgp.s"
CU = FIXTURES / "gemm_lds_tiled.s"


def _rsrc(num_records: int, stride: int = 0, oob: int = 3, add_tid: bool = False) -> dict:
    """SGPRs 12..15 as a V#: base = buffer 'a' (words 0 and 1 from the harness), then the stride
    ORed into word 1 by the test body, num_records and word 3 (OOB_SELECT, ADD_TID_ENABLE)."""
    return {12: buffer("a"), 14: np.uint32(num_records), 15: np.uint32((oob << 28) | (add_tid << 23))}


def test_raw_buffer_load_offen_with_range_check():
    a = np.arange(64, dtype=np.float32)
    body = "buffer_load_b32 v4, v0, s[12:15], s2 offen offset:4\ns_waitcnt vmcnt(0)"
    # raw buffer of 100 bytes seen from soffset 8: lanes whose dword ends past 100 read 0
    st = B.run(body, buffers={"a": a}, vgprs={0: LANE * 4, 4: 0xDEAD}, sgprs={**_rsrc(100), 2: 8})
    got = st.v(4, np.float32)
    for lane in range(32):
        off = lane * 4 + 4 + 8
        assert got[lane] == (a[off // 4] if off + 4 <= 100 else 0.0), lane


def test_structured_buffer_idxen_stride_and_num_records():
    a = np.arange(256, dtype=np.uint32)
    body = ("s_or_b32 s13, s13, 0x100000\n"           # stride 16 bytes in word 1 [61:48]
            "buffer_load_b64 v[4:5], v0, s[12:15], 0 idxen offset:8\ns_waitcnt vmcnt(0)")
    st = B.run(body, buffers={"a": a}, vgprs={0: LANE, 4: 7, 5: 7}, sgprs=_rsrc(20, oob=1))
    for lane in range(32):
        want = (a[lane * 4 + 2], a[lane * 4 + 3]) if lane < 20 else (0, 0)
        assert (st.v(4)[lane], st.v(5)[lane]) == want, lane


def test_buffer_store_out_of_range_writes_nothing_and_respects_exec():
    a = np.zeros(64, dtype=np.uint32)
    body = "buffer_store_b32 v4, v0, s[12:15], 0 offen\ns_waitcnt_vscnt null, 0x0"
    st = B.run(body, buffers={"a": a}, vgprs={0: LANE * 4, 4: LANE + 100}, sgprs=_rsrc(64),
               exec_mask=0x0000_FFFF_0000_FFFF & 0xFFFF_FFFF | 0x00F0_0000)
    out = st.buffers["a"].view(np.uint32)
    for lane in range(32):
        active = lane < 16 or 20 <= lane < 24
        assert out[lane] == ((lane + 100) if active and lane < 16 else 0), lane


def test_buffer_add_tid_and_oob_select_two():
    a = np.arange(64, dtype=np.uint32) * 3
    body = ("s_or_b32 s13, s13, 0x40000\n"            # stride 4
            "buffer_load_b32 v4, off, s[12:15], 0\ns_waitcnt vmcnt(0)")
    st = B.run(body, buffers={"a": a}, vgprs={4: 1}, sgprs=_rsrc(1, oob=2, add_tid=True))
    assert np.array_equal(st.v(4), a[:32])


def test_buffer_partly_out_of_range_is_not_guessed():
    from isalint.validate.emu import EmulationError

    with pytest.raises(EmulationError, match="partly out of range"):
        B.run("buffer_load_b64 v[4:5], v0, s[12:15], 0 offen\ns_waitcnt vmcnt(0)",
              buffers={"a": np.zeros(64, np.uint32)}, vgprs={0: LANE * 8 + 4}, sgprs=_rsrc(64))


def test_aliases_run_as_their_opcodes():
    a = np.arange(64, dtype=np.float32)
    body = ("v_add_u32_e32 v1, 4, v0\n"
            "global_load_dword v4, v[2:3], off\n"
            "s_waitcnt vmcnt(0)\n"
            "ds_write_b32 v1, v4\n"
            "s_waitcnt lgkmcnt(0)\n"
            "ds_read_b32 v5, v1\n"
            "s_waitcnt lgkmcnt(0)\n"
            "s_andn2_b32 s20, -1, 0xff\n"
            "buffer_gl0_inv\nbuffer_gl1_inv")
    st = B.run(body, buffers={"a": a}, vgprs={0: LANE * 4, 2: buffer("a", LANE * 4)}, lds=np.zeros(1024, np.uint8))
    assert np.array_equal(st.v(1), LANE * 4 + 4)
    assert np.array_equal(st.v(5, np.float32), a[:32])
    assert int(st.s(20)) == 0xFFFF_FF00


# ----------------------------------------------------------------------------- whole kernels

@pytest.fixture(scope="module")
def runner():
    need_toolchain()
    return CliRunner()


def test_wgp_kernel_with_buffer_gl0_inv_validates(runner):
    text = WGP.read_text()
    assert "buffer_gl0_inv" in text and "buffer_gl0_inv" not in CU.read_text()
    r = runner.invoke(cli, ["validate", str(WGP), str(WGP), "--gemm", "128"])
    assert r.exit_code == 0 and "EQUAL" in r.output, r.output
    r = runner.invoke(cli, ["validate", str(CU), str(WGP), "--gemm", "64"])
    assert r.exit_code == 0 and "EQUAL" in r.output, r.output
    r = runner.invoke(cli, ["run", str(WGP), "--gemm", "128", "--beta", "0.5"])
    assert r.exit_code == 0 and "matches numpy" in r.output, r.output


_SPELLINGS = [("v_add_nc_u32_e32", "v_add_u32_e32"), ("ds_load_b128", "ds_read_b128"),
              ("ds_store_b32", "ds_write_b32"), ("ds_load_2addr_b32", "ds_read2_b32"),
              ("global_load_b32", "global_load_dword"), ("global_store_b32", "global_store_dword"),
              ("s_load_b128", "s_load_dwordx4")]


def test_kernel_in_older_spellings_checks_clean_and_validates(runner, tmp_path):
    text = WGP.read_text()
    for new, old in _SPELLINGS:
        assert re.search(rf"\t{new}\s", text), new
        text = re.sub(rf"\t{new}(?=\s)", "\t" + old, text)
    aliased = tmp_path / "k8_spellings.s"
    aliased.write_text(text)
    r = runner.invoke(cli, ["check", str(aliased), "--select", "PARSE"])
    assert r.exit_code == 0, r.output
    # every rule reads the old spellings as the opcodes they stand for: the same findings
    import json

    def findings(path):
        out = runner.invoke(cli, ["check", str(path), "--format", "json"]).output
        return sorted((f["code"], f["line"]) for f in json.loads(out))
    assert findings(aliased) == findings(WGP) != []
    r = runner.invoke(cli, ["dump", str(aliased)])
    assert "v_add_u32_e32 (= v_add_nc_u32_e32)" in r.output and "ds_read_b128 (= ds_load_b128)" in r.output
    r = runner.invoke(cli, ["validate", str(WGP), str(aliased), "--gemm", "64"])
    assert r.exit_code == 0 and "EQUAL" in r.output, r.output


def test_unemulated_instruction_is_named_and_exit_2(runner, tmp_path):
    text = WGP.read_text().replace("\tbuffer_gl0_inv\n", "\tbuffer_gl0_inv\n\tv_add_f16 v30, v30, v30\n", 1)
    k = tmp_path / "packed.s"
    k.write_text(text)
    r = runner.invoke(cli, ["validate", str(WGP), str(k), "--gemm", "64"])
    assert r.exit_code == 2, r.output
    assert "v_add_f16" in r.output


def test_run_saves_c_and_reads_inputs(runner, tmp_path):
    rng = np.random.default_rng(3)
    n = 64
    mats = [rng.uniform(-1, 1, (n, n)).astype(np.float32) for _ in range(3)]
    paths = []
    for name, m in zip("abc", mats):
        p = tmp_path / f"{name}.npy"
        np.save(p, m)
        paths.append(str(p))
    out = tmp_path / "C.npy"
    r = runner.invoke(cli, ["run", str(WGP), "--gemm", str(n), "--alpha", "2", "--beta", "-1",
                            "--inputs", ",".join(paths), "--save", str(out)])
    assert r.exit_code == 0 and "matches numpy" in r.output, r.output
    c = np.load(out)
    assert c.dtype == np.float32 and c.shape == (n, n)
    a, b, c0 = (m.astype(np.float64) for m in mats)
    assert np.abs(c - (2 * a @ b - c0)).max() < 1e-4
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((n, n)))
    r = runner.invoke(cli, ["run", str(WGP), "--gemm", str(n), "--inputs", f"{paths[0]},{bad},{paths[2]}"])
    assert r.exit_code == 2 and "float32" in r.output and "Traceback" not in r.output
    r = runner.invoke(cli, ["run", str(WGP), "--save", str(out)])
    assert r.exit_code == 2 and "--gemm" in r.output
