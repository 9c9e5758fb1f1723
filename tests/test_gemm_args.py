"""Any GEMM signature (issue 24, item 2) and production kernels (item 4): arguments bound by metadata name or
position for ``estimate``, ``run`` and ``validate``; ``--tensile`` on rocBLAS's Tensile library.

The public-signature kernels are clang-19's builds in ``fixtures/inputs/sgemm`` (their kernels.json binds
alpha, beta and the matrices; the sizes come from the command line). The Tensile tests read the library
where it is installed (``ISALINT_TENSILE_LIBRARY``) and skip when it is absent.
"""
from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from isalint.cli import cli
from isalint.model.bindings import BindingError, bind, evaluate
from isalint.model.launch import KernelArg
from test_emu_support import need_toolchain

REPO = Path(__file__).resolve().parents[1]
SGEMM_DIR = REPO / "fixtures" / "inputs" / "sgemm"
SGEMM = SGEMM_DIR / "sgemm.s"
BATCHED = SGEMM_DIR / "sgemm_tn_batched.s"
_LIB_CANDIDATES = [os.environ.get("ISALINT_TENSILE_LIBRARY", ""),
                   "/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library/TensileLibrary_gfx1100.co",
                   "/work/trixie/root/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library/TensileLibrary_gfx1100.co"]
TENSILE = next((Path(p) for p in _LIB_CANDIDATES if p and Path(p).is_file()), None)


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(res) -> str:
    assert res.exit_code == 2, res.output
    err = res.stderr.strip()
    assert err.count("\n") == 0 and err.startswith("isalint: "), err
    assert "Traceback" not in res.output
    return err


def estimate_json(*args) -> dict:
    res = invoke("estimate", *args, "--format", "json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


# ---------------------------------------------------------------------------------------------
# bindings


ARGS = [KernelArg(0, "M", 0, 4, "by_value"), KernelArg(1, "N", 4, 4, "by_value"), KernelArg(2, "K", 8, 4, "by_value"),
        KernelArg(3, "alpha", 12, 4, "by_value"), KernelArg(4, "A", 16, 8, "global_buffer"),
        KernelArg(5, "hidden", 24, 8, "hidden_block_count_x")]


def test_bindings_by_name_position_and_expression():
    b = bind(ARGS, ["K=M*2", "0=48", "arg1=ceil(M/5)", "alpha=0.5", "A=matrix(M,K,f16)"])
    assert b.scalars == {"M": 48, "N": 10, "K": 96, "alpha": 0.5}
    assert b.matrices["A"].dims == (48, 96) and b.matrices["A"].dtype == "f16" and b.matrices["A"].nbytes == 48 * 96 * 2


@pytest.mark.parametrize("items, words", [
    (["Q=1"], ["Q", "no such argument", "M, N, K, alpha, A"]),
    (["M=1", "0=2"], ["bound twice"]),
    (["A=matrix(M,K)"], ["'M' is not a bound scalar", "--arg M=VALUE"]),
    (["M=__import__('os')"], ["not part of the expression grammar"]),
    (["M=4", "alpha=matrix(M,M)"], ["alpha is not a buffer"]),
    (["M=4", "K=0", "A=matrix(M,K)"], ["dimensions must be positive"]),
    (["M=1/0"], ["division by zero"]),
])
def test_bad_bindings_say_why(items, words):
    with pytest.raises(BindingError) as exc:
        bind(ARGS, items)
    assert all(w in str(exc.value) for w in words), str(exc.value)


def test_expression_grammar():
    assert evaluate("ceil(N/16)*16 + max(1, N % 5)", {"N": 33}) == 48 + 3
    with pytest.raises(BindingError):
        evaluate("N.real", {"N": 3})


# ---------------------------------------------------------------------------------------------
# the public SGEMM signature: estimate


def test_sgemm_estimate_rates_the_bound_problem():
    d = estimate_json(SGEMM, "--arg", "M=2048", "--arg", "N=1024", "--arg", "K=512")
    flop = 2.0 * 2048 * 1024 * 512
    assert d["problem"]["flop"] == flop and d["problem"]["k"] == 512
    assert d["grid"] == [1024 // 16, 2048 // 16, 1] and d["block"] == [16, 16, 1]
    assert d["tflops"] == pytest.approx(flop / (d["predicted_ms"] * 1e-3) / 1e12, rel=2e-3)
    assert 0 < d["efficiency"] < 1 and d["efficiency"] == pytest.approx(d["tflops"] / d["peak_tflops"], rel=2e-3)
    assert d["dtype"] == "fp32"
    # the main loop runs K/16 times per wave: twice the K, about twice the time
    d2 = estimate_json(SGEMM, "--arg", "M=2048", "--arg", "N=1024", "--arg", "K=1024")
    loop = lambda e: max(e["loops"], key=lambda lp: lp["share"])  # noqa: E731
    assert loop(d)["trips_per_wave"] == 512 // 16 and loop(d2)["trips_per_wave"] == 1024 // 16
    assert 1.6 < d2["predicted_ms"] / d["predicted_ms"] < 2.4


def test_sgemm_positional_binding_is_the_named_one(tmp_path):
    src = tmp_path / "sgemm.s"  # away from kernels.json: everything on the command line
    shutil.copy(SGEMM, src)
    named = estimate_json(src, "--arg", "M=1024", "--arg", "N=1024", "--arg", "K=1024", "--arg", "alpha=1.0",
                          "--arg", "beta=0.0", "--arg", "A=matrix(M,K)", "--arg", "B=matrix(K,N)",
                          "--arg", "C=matrix(M,N)", "--expect", "gemm", "--grid", "ceil(N/16),ceil(M/16)",
                          "--block", "16,16")
    positional = estimate_json(src, "--arg", "0=1024", "--arg", "arg1=1024", "--arg", "2=1024", "--arg", "3=1.0",
                               "--arg", "6=0.0", "--arg", "4=matrix(M,K)", "--arg", "5=matrix(K,N)",
                               "--arg", "7=matrix(M,N)", "--expect", "C = alpha*A@B + beta*C", "--grid", "64,64",
                               "--block", "16,16")
    assert named["predicted_ms"] == positional["predicted_ms"]
    assert named["problem"]["flop"] == positional["problem"]["flop"] == 2.0 * 1024 ** 3


def test_unbound_argument_the_kernel_reads_is_named(tmp_path):
    src = tmp_path / "sgemm.s"
    shutil.copy(SGEMM, src)
    err = one_line_error(invoke("estimate", src, "--arg", "N=4096", "--arg", "K=4096", "--arg", "alpha=1.0",
                                "--arg", "beta=0.0", "--grid", "256,256", "--block", "16,16"))
    assert f"{src}:" in err and "reads argument M" in err and "--arg M=VALUE" in err
    line = int(err.split(f"{src}:")[1].split(":")[0])
    assert "s_load" in src.read_text().split("\n")[line - 1]


def test_gemm_abi_is_refused_on_another_signature(tmp_path):
    src = tmp_path / "sgemm.s"
    shutil.copy(SGEMM, src)
    err = one_line_error(invoke("estimate", src, "--gemm", "4096"))
    assert "N would be read from another argument" in err and "--arg NAME=VALUE" in err


def test_unbound_size_from_kernels_json_is_named():
    err = one_line_error(invoke("estimate", SGEMM, "--arg", "M=64", "--arg", "K=64"))
    assert "kernels.json" in err and "'N' is not a bound scalar" in err


def test_batched_transposed_estimate_counts_every_batch():
    one = estimate_json(BATCHED, "--arg", "M=512", "--arg", "N=256", "--arg", "K=128", "--arg", "batchCount=1")
    eight = estimate_json(BATCHED, "--arg", "M=512", "--arg", "N=256", "--arg", "K=128", "--arg", "batchCount=8")
    assert eight["problem"]["flop"] == 8 * one["problem"]["flop"] == 8 * 2.0 * 512 * 256 * 128
    assert eight["grid"] == [16, 32, 8]
    assert eight["predicted_ms"] > 4 * one["predicted_ms"]


# ---------------------------------------------------------------------------------------------
# run and validate


def test_sgemm_runs_and_matches_numpy():
    res = invoke("run", SGEMM, "--arg", "M=40", "--arg", "N=24", "--arg", "K=20", "--arg", "alpha=0.5",
                 "--arg", "beta=-1.5")
    assert res.exit_code == 0, res.output
    assert "OK: C = alpha*A@B + beta*C within the rounding bound (960 elements" in res.stdout


def test_wrong_formula_is_a_mismatch():
    res = invoke("run", SGEMM, "--arg", "M=40", "--arg", "N=24", "--arg", "K=20", "--arg", "beta=-1.5",
                 "--expect", "C = alpha*A@B")
    assert res.exit_code == 1, res.output
    assert "MISMATCH" in res.stdout and "960 of 960" in res.stdout


def test_formula_of_the_wrong_shape_is_refused():
    err = one_line_error(invoke("run", SGEMM, "--arg", "M=40", "--arg", "N=24", "--arg", "K=20",
                                "--expect", "C = alpha*A.T@B + beta*C"))
    assert "inner dimensions differ" in err


def test_batched_transposed_runs_and_matches_numpy():
    res = invoke("run", BATCHED, "--arg", "M=20", "--arg", "N=33", "--arg", "K=17", "--arg", "batchCount=3",
                 "--arg", "beta=0.25")
    assert res.exit_code == 0, res.output
    assert "OK: C = alpha*A.T@B + beta*C" in res.stdout and "(1980 elements" in res.stdout
    # the same data read as untransposed is wrong: the check can fail
    res = invoke("run", BATCHED, "--arg", "M=20", "--arg", "N=33", "--arg", "K=20", "--arg", "batchCount=3",
                 "--arg", "beta=0.25", "--expect", "C = alpha*A@B + beta*C")
    assert res.exit_code == 1 and "MISMATCH" in res.stdout, res.output


def test_run_needs_every_argument(tmp_path):
    src = tmp_path / "sgemm.s"
    shutil.copy(SGEMM, src)
    err = one_line_error(invoke("run", src, "--arg", "M=16", "--arg", "N=16", "--arg", "K=16", "--arg", "alpha=1.0",
                                "--arg", "A=matrix(M,K)", "--arg", "B=matrix(K,N)", "--arg", "C=matrix(M,N)",
                                "--grid", "1,1", "--block", "16,16"))
    assert "beta" in err and "not bound" in err


def _candidate(tmp_path, name, old, new) -> Path:
    text = SGEMM.read_text()
    assert old in text
    out = tmp_path / name
    out.write_text(text.replace(old, new, 1))
    return out


def test_validate_with_bindings(tmp_path):
    need_toolchain()
    same = _candidate(tmp_path, "nop.s", "\ts_barrier\n", "\ts_barrier\n\ts_nop 0\n")
    res = invoke("validate", SGEMM, same, "--arg", "M=40", "--arg", "N=24", "--arg", "K=20", "--arg", "beta=0.5")
    assert res.exit_code == 0, res.output
    assert "EQUAL" in res.stdout and "candidate: C = alpha*A@B + beta*C within the rounding bound" in res.stdout
    wrong = _candidate(tmp_path, "wrong.s", "v_fmac_f32_e32 v7, v27, v17", "v_fmac_f32_e32 v7, v26, v17")
    res = invoke("validate", SGEMM, wrong, "--arg", "M=40", "--arg", "N=24", "--arg", "K=20", "--arg", "beta=0.5")
    assert res.exit_code == 1, res.output
    assert "DIFFERENT" in res.stdout and "candidate: C differs from C = alpha*A@B + beta*C" in res.stdout


# ---------------------------------------------------------------------------------------------
# Tensile kernels of a code object


def tensile_kernels() -> list[str]:
    from isalint.binary import codeobject
    from isalint.parse.reading import map_file

    kernels, _ = codeobject.read(map_file(str(TENSILE)), str(TENSILE), "Cijk_*_MT128x128x16_*WGM4")
    return [k.name for k in kernels]


@pytest.fixture(scope="module")
def families():
    if TENSILE is None:
        pytest.skip("rocBLAS's TensileLibrary_gfx1100.co is not installed (set ISALINT_TENSILE_LIBRARY)")
    names = tensile_kernels()
    out = {}
    for prefix in ("Cijk_Ailk_Bljk_HHS_BH_MT", "Cijk_Alik_Bjlk_HB_MT", "Cijk_Ailk_Bjlk_BBS_BH_GB_MT",
                   "Cijk_Alik_Bljk_I8II_BH_MT"):
        match = [n for n in names if n.startswith(prefix)]
        assert match, prefix
        out[prefix] = match[0]
    return out


DTYPE = {"HHS": "fp16", "HB": "fp16", "BBS": "bf16", "I8II": "int8"}


def test_tensile_families_are_estimated(families):
    for prefix, name in families.items():
        d = estimate_json(TENSILE, "--kernel", name, "--tensile", "2048,1024,4096,2")
        assert d["dtype"] == DTYPE[prefix.split("_")[3]], name
        assert d["grid"] == [2048 // 128, 1024 // 128, 2] and d["block"] == [128, 1, 1]
        assert d["problem"]["flop"] == 2.0 * 2048 * 1024 * 4096 * 2
        assert 0.05 < d["efficiency"] <= 1.0
        assert d["efficiency"] == pytest.approx(d["tflops"] / d["peak_tflops"], rel=2e-3)
        assert d["tflops"] == pytest.approx(d["problem"]["flop"] / (d["predicted_ms"] * 1e-3) / 1e12, rel=2e-3)


def test_tensile_arguments_drive_the_path(families):
    name = families["Cijk_Ailk_Bljk_HHS_BH_MT"]
    base = estimate_json(TENSILE, "--kernel", name, "--tensile", "1024,1024,2048")
    longer = estimate_json(TENSILE, "--kernel", name, "--tensile", "1024,1024,4096")
    loop = lambda e: max(e["loops"], key=lambda lp: lp["share"])  # noqa: E731
    assert loop(longer)["trips_per_wave"] == 2 * loop(base)["trips_per_wave"]
    # alpha 0: the kernel sets its K to 0 after v_cmp_eq_f32 alpha, 0 (a uniform compare the walk decides)
    res = invoke("estimate", TENSILE, "--kernel", name, "--tensile", "1024,1024,2048", "--arg", "alpha=0.0",
                 "--format", "json")
    if res.exit_code == 0:
        assert json.loads(res.stdout)["predicted_ms"] < base["predicted_ms"] / 4
    else:  # the FLOPs of alpha*A*B then come in no time: above the peak, refused
        assert "above the" in one_line_error(res)
    # beta != 0 makes the kernel read C as well
    with_c = estimate_json(TENSILE, "--kernel", name, "--tensile", "1024,1024,2048", "--arg", "beta=1.0")
    assert with_c["predicted_ms"] >= base["predicted_ms"]


def test_tensile_odd_sizes_tile_up(families):
    name = families["Cijk_Alik_Bljk_I8II_BH_MT"]
    d = estimate_json(TENSILE, "--kernel", name, "--tensile", "257,1031,77,3")
    assert d["grid"] == [math.ceil(257 / 128), math.ceil(1031 / 128), 3]
    assert d["problem"]["M"] == 257 and d["problem"]["batch"] == 3


@pytest.mark.parametrize("extra, words", [
    (["--tensile", "1024,1024"], ["expected M,N,K[,B]"]),
    (["--tensile", "1024,1024,0"], ["positive"]),
    (["--tensile", "64,64,64", "--arg", "Bogus=1"], ["Bogus", "no such argument"]),
    (["--tensile", "64,64,64", "--gemm", "64"], ["one or the other"]),
])
def test_tensile_refusals_are_one_line(families, extra, words):
    err = one_line_error(invoke("estimate", TENSILE, "--kernel", families["Cijk_Ailk_Bljk_HHS_BH_MT"], *extra))
    assert all(w in err for w in words), err


def test_gemm_abi_output_has_its_efficiency_too():
    d = estimate_json(REPO / "fixtures" / "kernels" / "gemm_register_tiled.s", "--gemm", "1024")
    assert d["problem"] is None and d["dtype"] == "fp32"
    assert 0 < d["efficiency"] < 1 and d["efficiency"] == pytest.approx(d["tflops"] / d["peak_tflops"], rel=2e-3)


def test_tensile_listing_is_cached_by_exact_name(families, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("ISALINT_CACHE_DIR", str(cache))
    name = families["Cijk_Alik_Bjlk_HB_MT"]
    first = estimate_json(TENSILE, "--kernel", name, "--tensile", "512,512,512")
    entries = [p for p in cache.rglob("*") if p.is_file() and p.parent != cache]
    assert len(entries) == 1
    assert estimate_json(TENSILE, "--kernel", name, "--tensile", "512,512,512") == first  # from the cache
    assert estimate_json(TENSILE, "--kernel", name, "--tensile", "512,512,512", "--no-cache") == first
    estimate_json(TENSILE, "--kernel", "?" + name[1:], "--tensile", "512,512,512")  # a glob: not kept
    assert len([p for p in cache.rglob("*") if p.is_file() and p.parent != cache]) == 1


@pytest.mark.parametrize("a, b", [("ilk", "ljk"), ("lik", "ljk"), ("ilk", "jlk"), ("lik", "jlk")])
def test_tensile_strides_follow_the_transposes(a, b):
    from isalint.estimate import tensile

    name = (f"Cijk_A{a}_B{b}_HHS_BH_MT128x64x16_MI16x16x16x1_SN_GSU1_SU32_SUM0_SUS256_WG32_4_1_WGM8")
    m, n, k, batch = 1000, 300, 96, 3
    tl = tensile.launch(name, (m, n, k, batch))
    v = tl.values
    assert v["strideA0"] == (k if a == "lik" else m) and v["strideA1"] == m * k
    assert v["strideB0"] == (n if b == "jlk" else k) and v["strideB1"] == k * n
    assert v["strideC0"] == v["strideD0"] == m and v["strideC1"] == m * n
    assert (v["SizesFree0"], v["SizesFree1"], v["SizesFree2"], v["SizesSum0"]) == (m, n, batch, k)
    assert (v["NumWorkGroups0"], v["NumWorkGroups1"]) == (8, 5) and tl.grid == (8, 5, 3) and tl.block == (128, 1, 1)
    # 5 tile columns in blocks of WGM 8: no full block, a remainder of 5, divided by multiplication
    assert (v["NumFullBlocks"], v["WgmRemainder1"]) == (0, 5)
    assert all((x * v["MagicNumberWgmRemainder1"]) >> 31 == x // 5 for x in range(0, 4096))
    # K = 96 is 6 unroll iterations: stagger-U 32 shrinks until 6 >= SU * 2^shift (shift 3 for 256 / (16*2))
    assert v["OrigStaggerUIter"] == 0
    assert tensile.launch(name, (m, n, 16 * 64, 1)).values["OrigStaggerUIter"] == 8 - 1
    assert tl.work.flop == 2.0 * m * n * k * batch


def test_tensile_refuses_other_names():
    from isalint.estimate import tensile

    with pytest.raises(tensile.TensileError):
        tensile.parse_name("sgemm")
    with pytest.raises(tensile.TensileError):
        tensile.parse_name("Cijk_Ailk_Bljk_ZZS_BH_MT128x64x16_WG32_4_1")


def test_uniform_compare_of_scalars():
    import struct

    from isalint.estimate.scalar import _compare

    f = lambda x: struct.unpack("<I", struct.pack("<f", x))[0]  # noqa: E731
    assert _compare("eq", "f32", f(0.0), 0) and _compare("eq", "f32", f(-0.0), 0)
    assert not _compare("eq", "f32", f(1.0), 0) and _compare("neq", "f32", f(float("nan")), f(float("nan")))
    assert _compare("lt", "i32", 0xFFFFFFFF, 0) and not _compare("lt", "u32", 0xFFFFFFFF, 0)
    assert _compare("ge", "u64", 1 << 40, 1 << 33)
    assert _compare("lg", "i32", 1, 2) is None  # not a VOPC integer compare
