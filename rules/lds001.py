"""LDS001: LDS bank conflict from the lanes' address stride.

## What it finds
A `ds_load*` / `ds_store*` (every width: `u8`/`u16`/`b32`/`b64`/`b96`/`b128`,
`offset:`, `offset0`/`offset1` of the `2addr` and `2addr_stride64` forms) whose
lanes hit the same LDS bank at different addresses, so the access is
serialized. isalint evaluates the address of every lane: `v0` holds the
work-item id (the packed x/y/z ids of gfx11, workgroup shape from the kernel
metadata), SGPRs and other wave-uniform values are symbolic (a uniform term
shifts every lane equally and never changes the conflict pattern), and the
integer VALU ops compilers emit for index math (add/sub, mul_lo, mul/mad_u24,
shifts, and/or/xor, bfe, lshl_add, lshl_or, and_or, mad_u64_u32, cndmask with a
uniform condition, spill/reload through fixed scratch slots) are evaluated per
lane, following reaching definitions through the CFG; in loops, an address
register advanced by a uniform step stays "uniform + per-lane part".

The finding gives the n-way conflict, the lanes that collide and the byte
stride between them, the bank cycles against the conflict-free count, and a
padding that removes the conflict (the row length `R` is the stride between
colliding lanes): e.g. `pad each row of 128 dwords by 4: X[8][128] -> X[8][132]`.
When an address cannot be evaluated (loaded from memory, a per-lane product of
two runtime values, a per-lane value that changes in a loop ...) it says so at
info level, with the reason, instead of guessing.

Analysed work-items: the whole workgroup when `.reqd_workgroup_size` is known,
else `.max_flat_workgroup_size` work-items along x (1-D kernels), else wave 0
with x spanning the wave and `threadIdx.y`/`z` uniform. Every lane is assumed
active (exec masks are not tracked) and workgroup ids below 2**24.

## The bank model
- 4-byte banks; dword `d` is in bank `d % B`, `B` = 64 in WGP mode and 32 in CU
  mode (`.amdhsa_workgroup_processor_mode 0`, hipcc `-mcumode`: a wave only
  uses its CU's half of the LDS). Source: the RDNA3 ISA guide, "Local Data
  Share": the LDS of a WGP is 64 DWORD-wide banks in two sets of 32, each set
  tied to one pair of SIMDs; DWORDs are placed in the banks serially; in CU mode
  a wave's LDS space lies in the half of its own SIMD pair. That a WGP-mode
  access counts its conflicts over all 64 banks in one pass is the model's
  reading of that text (an assumption: the guide does not say how a pass is
  served across the two sets).
- The LDS serves 32 dwords (128 bytes) per pass: 32 lanes of a `b32` (or
  narrower) access, 16 lanes of a `b64`, 8 lanes of a `b96`/`b128`. Wider
  accesses are split into consecutive-lane passes and conflicts are counted
  within each pass, so 8 lanes of a `b128` read 32 consecutive dwords without
  conflict.
- The two addresses of a `2addr` access are served as two accesses of the base
  width (this is why `As[8][132]` is conflict-free although its `offset1`
  dwords overlap the `offset0` banks of other lanes).
- Lanes reading the same dword are served together (broadcast).
- A pass costs as many cycles as the most distinct dwords any bank must
  deliver; the n of "n-way" is the worst pass of the worst wave.

The ISA guide gives the banks and the 32 concurrent dword accesses; it does
not spell out how the lanes of a 64- or 128-bit access are grouped, so the
128-byte passes above follow AMD's LDS documentation for GCN/CDNA (phases of
16 lanes for b64 and 8 lanes for b128). Treat the n of a wide access as the
model's estimate; a b32 conflict needs no such assumption.

## Severity
A cost: the extra bank cycles of one access (`cycles - ideal`) times how often
the code runs (as for BANK001). A **warning** when that is at least 1% of the
kernel's modelled VALU issue cycles per wave, **info** below: a conflicted tile
store before a GEMM's loop is info, the same store in the loop a warning. Unlike
the VGPR-bank rules, code outside loops is not capped at info: a kernel without
loops (a transpose) is all such code, and its conflicts are its cost. An
address isalint cannot evaluate is info.

## Why it matters
Conflicting lanes are served one after another: an 8-way conflict makes a
store 8 times slower and holds the LDS for every wave of the CU. A GEMM that
stores its transposed A tile into `__shared__ float As[8][128]` puts the 8 rows
512 bytes apart, the same 4 banks take 8 dwords each, and padding the rows to
132 floats removes the conflict.

## Example
```asm
; As[t % 8][t / 8] with rows of 128 floats (CU mode, 32 banks)
v_and_b32_e32 v1, 7, v0
v_lshrrev_b32_e32 v2, 3, v0
v_lshlrev_b32_e32 v2, 2, v2
v_lshl_add_u32 v1, v1, 9, v2       ; 512 bytes per row
ds_store_b32 v1, v3                ; LDS001: 8-way bank conflict
```
Good (rows of 132 floats):
```asm
v_mad_u32_u24 v1, 0x210, v1, v2    ; 528 bytes per row
ds_store_b32 v1, v3
```

## Fix safety
No automatic fix: padding changes the array's layout, so every access to the
array (loads and stores) and the LDS size must change together in the source.

## Reference
RDNA3 ISA guide, "Local Data Share" / "Data Share Operations" (LDS banks, WGP
and CU mode) and the DS instruction descriptions (offset0/offset1, stride64).
"""
from __future__ import annotations

from isalint.diagnostics import at_instr
from isalint.hw.lds_banks import bank_conflicts
from isalint.model.lanes.evaluator import evaluator_for
from isalint.model.lanes.lds import ds_shape, lds_banks
from isalint.model.lanes.values import Value

from .cost import cost_note, cost_of, region_of, severity_for

CODE = "LDS001"
NAME = "lds-bank-conflict"
SEVERITY = "warning"
SUMMARY = "LDS access whose lanes collide in the same bank (n-way conflict from the address stride)"
FIXABLE = None


def _lanes_text(lanes: list[int], step: int) -> str:
    if len(lanes) > 2 and step and lanes == list(range(lanes[0], lanes[0] + step * len(lanes), step)):
        if step == 1:
            return f"lanes {lanes[0]}-{lanes[-1]}"
        if len(lanes) > 4:
            return f"lanes {lanes[0]}, {lanes[1]}, ..., {lanes[-1]}"
    shown = ", ".join(str(x) for x in lanes[:8])
    return f"lanes {shown}{', ...' if len(lanes) > 8 else ''}"


def _suggestion(c, banks: int) -> str:
    row = c.row_bytes // 4
    if c.pad is None:
        return (f"no row padding up to {banks} dwords removes it; swizzle the column index "
                "(XOR it with the row) instead")
    rows = max(2, c.rows)
    return (f"pad each row of {row} dwords by {c.pad}: e.g. float X[{rows}][{row}] -> "
            f"X[{rows}][{row + c.pad}] (row stride {4 * (row + c.pad)} bytes)")


def _nth(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# The worst conflict of an access depends on its width and lane addresses alone: worked out once per
# such access (a library's kernels of one tile shape read and write the same addresses).
_CONFLICTS: dict[tuple, object] = {}
_CONFLICTS_MAX = 1 << 14


def _conflicts(access, banks: int, wave_size: int):
    addresses = tuple(access.addresses)
    # the same address tuples come back as the same objects (lds_access makes each once): found by
    # identity first, without hashing every lane's address
    ikey = (access.width, banks, wave_size, *map(id, addresses))
    hit = _BY_ID.get(ikey)
    if hit is not None and all(a is b for a, b in zip(hit[0], addresses)):
        return hit[1]
    key = (access.width, addresses, banks, wave_size)
    if key in _CONFLICTS:
        c = _CONFLICTS[key]
    else:
        c = bank_conflicts(access, banks, wave_size)
        if len(_CONFLICTS) >= _CONFLICTS_MAX:
            _CONFLICTS.clear()
        _CONFLICTS[key] = c
    if len(_BY_ID) >= _CONFLICTS_MAX:
        _BY_ID.clear()
    _BY_ID[ikey] = (addresses, c)  # the entry keeps the tuples, and so their ids, alive
    return c


_BY_ID: dict[tuple, tuple] = {}


def check(analysis):
    program = analysis.program
    for ins in program.instrs:
        if ins.klass != "lds" or ins.opaque or ds_shape(ins.opcode) is None:
            continue
        ev = evaluator_for(analysis, ins.index)
        access = ev.lds_access(ins)
        if access is None:
            continue
        mnemonic = ins.stmts[0].mnemonic
        if isinstance(access, Value):
            yield at_instr(program, ins, CODE, "info",
                           f"cannot evaluate the per-lane address of this {mnemonic}: {access.reason}; "
                           "bank conflicts not checked")
            continue
        banks = lds_banks(ev.kernel)
        c = _conflicts(access, banks, ev.ws)
        if c is None:
            continue
        mode = f"{'WGP' if banks == 64 else 'CU'} mode, {banks} banks"
        if len(access.addresses) == 2:
            mode += f"; offset{c.address} address"
        verb = "read" if access.kind == "load" else "write"
        if c.lane_stride and c.lane_step == 1:
            cause = (f"the lane stride of {c.lane_stride} bytes ({c.lane_stride // 4} dwords) is a multiple of "
                     f"the {banks} banks, so consecutive lanes share a bank")
        elif c.lane_stride:
            cause = (f"the lane stride of {c.lane_stride} bytes ({c.lane_stride // 4} dwords) brings every "
                     f"{_nth(c.lane_step)} lane back to the same bank")
        else:
            cause = f"they are {c.byte_stride} bytes apart, a multiple of {4 * banks} (the bank period)"
        msg = (f"{c.degree}-way LDS bank conflict ({mode}): {_lanes_text(c.lanes, c.lane_step)} of "
               f"wave {c.wave} {verb} {len(c.lanes)} different dwords of bank {c.bank}: {cause}; "
               f"{c.cycles} bank cycles instead of {c.ideal}")
        region = region_of(analysis, ins.index)
        cost = cost_of(analysis, region, c.cycles - c.ideal)
        # no cap for code outside loops: a kernel without loops (a transpose) is all such code
        diag = at_instr(program, ins, CODE, severity_for(region, cost, cold_is_info=False), msg)
        diag.cost = cost
        diag.notes += [_suggestion(c, banks), cost_note(analysis, region, cost, "LDS bank cycles")]
        yield diag
