"""The reader of rocBLAS's Tensile logic files behind ``benchmarks/bench_heldout_navi31.py``.

On the real navi31 files when ``$ISALINT_NAVI31_LOGIC`` names their folder (or a rocBLAS source tree),
and the mapping to kernels when ``$ISALINT_TENSILE_LIBRARY`` names rocBLAS 5.5.1's
TensileLibrary_gfx1100.co; both skipped when absent. The bad-input cases use files written here."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
import bench_heldout_navi31 as held  # noqa: E402

LOGIC = os.environ.get(held.LOGIC_ENV, "")
LIBRARY = Path(os.environ.get("ISALINT_TENSILE_LIBRARY", "/usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library/"
                              "TensileLibrary_gfx1100.co"))


def real_files() -> list[str]:
    files = held.logic_files(LOGIC) if LOGIC and os.path.isdir(LOGIC) else []
    if not files:
        pytest.skip(f"no navi31 logic files (set {held.LOGIC_ENV} to their folder)")
    return files


def one_per_family(files: list[str]) -> list[str]:
    """A strided and a general-batched file of each data type, the transposes varying."""
    picked, seen = [], set()
    for f in files:
        name = os.path.basename(f)
        key = (name.split("_")[4], name.endswith("_GB.yaml"))
        if key not in seen:
            seen.add(key)
            picked.append(f)
    return picked


def test_real_files_read_consistently():
    for path in one_per_family(real_files()):
        lg = held.read_logic(path)
        assert lg.schedule == "navi31" and lg.architecture == "gfx1100", path
        assert lg.metric == "DeviceEfficiency", path
        assert [s.index for s in lg.solutions] == list(range(len(lg.solutions)))
        assert lg.points, path
        # the file's name is the problem the kernels carry
        assert os.path.basename(path) == f"navi31_{lg.problem}.yaml"
        ta, tb = lg.problem_type["TransposeA"], lg.problem_type["TransposeB"]
        assert lg.trans == ("T" if ta else "N") + ("T" if tb else "N")
        for p in lg.points:
            assert p.m > 0 and p.n > 0 and p.k > 0 and p.batch >= 1
            assert 0 <= p.solution < len(lg.solutions)
            assert 0 <= p.efficiency <= 100  # a percentage, as ConvertToEfficiency writes it
            ldd, ldc, lda, ldb = p.ld
            # the size order I, J, K, L, LDD, LDC, LDA, LDB: every leading dimension covers its matrix's
            # fastest index (M for C and D; M or K for A, K or N for B by the transposes)
            assert ldd >= p.m and ldc >= p.m, p
            assert lda >= (p.k if ta else p.m), p
            assert ldb >= (p.n if tb else p.k), p


def test_general_batched_tables_repeat_the_strided_ones():
    files = real_files()
    by_name = {os.path.basename(f): f for f in files}
    pairs = [(by_name[n], by_name[n.replace("_GB.yaml", ".yaml")]) for n in by_name
             if n.endswith("_GB.yaml") and n.replace("_GB.yaml", ".yaml") in by_name][:2]
    if not pairs:
        pytest.skip("no _GB file with its strided twin")
    for gb_path, sb_path in pairs:
        gb, sb = held.read_logic(gb_path), held.read_logic(sb_path)
        assert gb.problem == sb.problem + "_GB"
        assert [(p.m, p.n, p.k, p.efficiency) for p in gb.points] == [(p.m, p.n, p.k, p.efficiency) for p in sb.points]


def test_solution_names_split_into_tokens_and_back():
    lg = held.read_logic(real_files()[0])
    for s in lg.solutions:
        problem, tokens = held.name_tokens(s.name_min)
        assert problem + "_" + "_".join(tokens) == s.name_min.rstrip("_")
        assert tokens[0].startswith("MT")
        assert not any(t[0].isdigit() and not t.startswith("1LDSB") for t in tokens)


def test_every_solution_maps_to_its_own_kernel():
    files = one_per_family(real_files())
    if not LIBRARY.is_file():
        pytest.skip("rocBLAS's TensileLibrary_gfx1100.co is not installed (set ISALINT_TENSILE_LIBRARY)")
    kernels = held.library_kernels(str(LIBRARY))
    for path in files:
        lg = held.read_logic(path)
        m = held.map_solutions(lg, kernels)
        assert m.missing == {}, (path, list(m.missing.items())[:3])
        assert len(set(m.kernel.values())) == len(lg.solutions)  # one kernel each, none shared
        assert m.checked == len(lg.solutions)
        for s in lg.solutions:
            name = m.kernel[s.index]
            assert name.startswith(lg.problem + "_MT")
            meta = kernels[name]
            assert meta[".max_flat_workgroup_size"] == math.prod(s.work_group)
            assert meta[".wavefront_size"] == s.wavefront


def test_a_solution_without_its_kernel_is_named():
    path = one_per_family(real_files())[0]
    lg = held.read_logic(path)
    first = lg.solutions[0]
    m = held.map_solutions(lg, {})
    assert set(m.missing) == {s.index for s in lg.solutions} and m.kernel == {}
    assert first.name_min in m.missing[0]


def _point(file: str, m: int, n: int, k: int) -> held.Point:
    return held.Point(file=file, family="HHS", trans="NT", general_batched=False, m=m, n=n, batch=1, k=k,
                      ld=(m, m, m, n), solution=0, efficiency=1.0)


def test_sample_spreads_over_files_and_size_classes():
    points = [_point(f, s, s, s) for f in ("a.yaml", "b.yaml") for s in (64, 128, 256, 512, 1024, 2048, 4096, 8192)
              for _ in range(5)]
    strata = {(p.file, p.size_class) for p in points}
    assert len(strata) == 8
    picked = held.sample(points, 16)
    assert len(picked) == 16 and len({id(p) for p in picked}) == 16
    assert {(p.file, p.size_class) for p in picked} == strata
    assert held.sample(points, 0) == points and held.sample(points, 10_000) == points


BAD = {
    "not_a_list.yaml": ("{a: 1}\n", 1, "not a Tensile logic file"),
    "broken.yaml": ("- {MinimumRequiredVersion: 4.35.0}\n- navi31\n- gfx1100: at: once\n- [Device 73bf]\n", 3, "not YAML"),
    "bad_entry.yaml": ("- {MinimumRequiredVersion: 4.35.0}\n- navi31\n- gfx1100\n- [Device 73bf]\n"
                       "- {OperationType: GEMM, StridedBatched: true}\n"
                       "- - {SolutionIndex: 0, SolutionNameMin: Cijk_Ailk_Bjlk_HB_MT64x64x16_SN_, WorkGroup: [16, 16, 1],\n"
                       "     WavefrontSize: 32, MacroTile0: 64, MacroTile1: 64, DepthU: 16, GlobalSplitU: 1}\n"
                       "- [2, 3, 0, 1]\n- - - [64, 64, 1, 64, 64, 64, 64, 64]\n    - [0, 1.5]\n"
                       "  - - [64, 64, 1, 64]\n    - [0, 1.5]\n- null\n- null\n- DeviceEfficiency\n",
                       11, "entry 1 has 4 sizes"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_logic_file_is_one_line_with_its_line(tmp_path, name):
    text, line, what = BAD[name]
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(held.LogicError) as err:
        held.read_logic(str(path))
    assert str(err.value).startswith(f"{path}:{line}: ") and what in str(err.value)
    # the benchmark: one line on standard error, exit 2, no traceback
    folder = tmp_path / "logic"
    folder.mkdir()
    (folder / f"navi31_{name}").write_text(text)
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_heldout_navi31.py"), "--logic", str(folder),
                        "--library", str(tmp_path / "absent.co"), "--dataset-only", "--out", str(tmp_path / "r.md")],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert f"navi31_{name}:{line}: " in r.stderr


def test_in_process_estimate_is_the_command_line_one():
    """The benchmark's in-process path (the library read once per worker) gives what ``isalint estimate
    --tensile`` prints, for a winner of a small and of a large size."""
    path = one_per_family(real_files())[0]
    if not LIBRARY.is_file():
        pytest.skip("rocBLAS's TensileLibrary_gfx1100.co is not installed (set ISALINT_TENSILE_LIBRARY)")
    if held.estimate_interface():
        pytest.skip("this isalint's estimate has no --tensile")
    lg = held.read_logic(path)
    kernels = held.library_kernels(str(LIBRARY))
    mapping = held.map_solutions(lg, kernels)
    points = sorted((p for p in lg.points if p.efficiency > 0), key=lambda p: p.flops)
    picked = [points[len(points) // 4], points[-1]]
    asked = [(mapping.kernel[p.solution], p) for p in picked]
    here = held.estimate_all(str(LIBRARY), asked, jobs=1, via="api")
    there = held.estimate_all(str(LIBRARY), asked, jobs=1, via="cli")
    for a, b in zip(here, there):
        assert a.refused == b.refused
        if a.refused is None:
            assert a.efficiency == pytest.approx(b.efficiency, abs=0.01)  # the JSON rounds to 4 digits
            assert a.us == pytest.approx(b.us, rel=1e-3, abs=0.06)  # and the time to 0.1 us


def test_saved_points_give_the_model_at_other_parameter_values(tmp_path):
    """A --points file keeps each point's SIMD time and DRAM floor, so the benchmark's report at other values
    of the two fitted parameters (--fit, --points-in) is what ``isalint estimate --param`` prints at them."""
    path = one_per_family(real_files())[1]
    if not LIBRARY.is_file():
        pytest.skip("rocBLAS's TensileLibrary_gfx1100.co is not installed (set ISALINT_TENSILE_LIBRARY)")
    if held.estimate_interface():
        pytest.skip("this isalint's estimate has no --tensile")
    lg = held.read_logic(path)
    mapping = held.map_solutions(lg, held.library_kernels(str(LIBRARY)))
    points = sorted((p for p in lg.points if p.efficiency > 0), key=lambda p: p.flops)
    picked = [points[0], points[len(points) // 2], points[-1]]
    here = held.estimate_all(str(LIBRARY), [(mapping.kernel[p.solution], p) for p in picked], jobs=1, via="api")
    saved = tmp_path / "points.json"
    saved.write_text(json.dumps(held.point_rows(here, held.BOOST_MHZ)))
    back = held.load_points(str(saved), [lg], held.BOOST_MHZ)
    assert [o.point for o in back] == picked
    fraction, overhead = 0.7, 20.0
    moved = held.with_parameters(back, fraction, overhead)
    for o, m in zip(here, moved):
        assert o.refused is None
        cmd = held.isalint_command() + ["estimate", str(LIBRARY), "--kernel", o.kernel, "--tensile",
                                        f"{o.point.m},{o.point.n},{o.point.k},{o.point.batch}", "--format", "json",
                                        "--param", f"matrix_clock_fraction={fraction}",
                                        "--param", f"launch_overhead_us={overhead}"]
        for item in held.stride_items(o.point):
            cmd += ["--arg", item]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert m.us == pytest.approx(1000 * doc["predicted_ms"], rel=1e-3, abs=0.06)
        assert m.efficiency == pytest.approx(100 * doc["efficiency"], abs=0.01)
        assert m.us > o.us  # both parameters moved the same way: slower
    # the fit finds back values it is given: times made from the model's own SIMD times
    made = [held.Outcome(o.point, o.kernel, o.efficiency, o.us, None, 0.0, o.limit, o.compute_us, o.dram_us)
            for o in back]
    for o in made:
        flops_per_us_at_peak = o.efficiency * o.us  # efficiency x time is the point's constant
        o.point = held.Point(o.point.file, o.point.family, o.point.trans, o.point.general_batched, o.point.m,
                             o.point.n, o.point.batch, o.point.k, o.point.ld, o.point.solution,
                             flops_per_us_at_peak / (max(o.compute_us / 0.8, o.dram_us) + 9.0))
    f, u = held.fit(made, held.BOOST_MHZ)
    assert f == pytest.approx(0.8, abs=0.01) and u == pytest.approx(9.0, abs=0.3)
