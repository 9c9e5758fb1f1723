"""``isalint disasm FILE -o DIR``: one re-assemblable ``.s`` per kernel of a code object."""
from __future__ import annotations

import os

import click

from .common import fail

_MAX_NAME = 200  # characters of a kernel name kept in its file name


def file_name(kernel: str) -> str:
    """``KERNEL.s``; a name too long for a file system keeps its start and gains a hash of the whole."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in kernel) or "kernel"
    if len(safe) <= _MAX_NAME:
        return safe + ".s"
    from hashlib import blake2b

    return f"{safe[:_MAX_NAME - 9]}_{blake2b(kernel.encode(), digest_size=4).hexdigest()}.s"


@click.command("disasm")
@click.argument("path", type=click.Path())
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory to write one .s per kernel into (made when missing).")
@click.option("--kernel", metavar="GLOB", help="Only the kernels whose names match.")
def command(path, out_dir, kernel):
    """Write each gfx11 kernel of a code object (.co, .hsaco, .o, a HIP fat binary, or an executable or
    library holding one) as a .s that the LLVM assembler turns back into the same code and
    descriptor: labels from the symbol table, the .amdhsa_kernel block of its descriptor and its
    .amdgpu_metadata. Every kernel is decoded before anything is written."""
    from ..binary import codeobject, listing
    from ..parse.reading import is_binary, map_file
    from ..parse.source import InputError
    from .progress import progress

    if not is_binary(path):
        try:
            map_file(path)
        except InputError as exc:
            fail(str(exc))
        fail(f"{path}:1: not a code object (an AMDGPU ELF file, an offload bundle or a host file holding one)")
    try:
        kernels, skipped = codeobject.read(map_file(path), path, kernel)
    except (codeobject.CodeObjectError, InputError) as exc:
        fail(f"{path}:1: {exc}")
    for s in skipped:
        click.echo(f"isalint: skipped {s.what}: {s.why}", err=True)
    if not kernels:
        fail(f"{path}:1: no gfx11 kernel" + (f" matches --kernel {kernel}" if kernel else ""))
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        fail(f"{out_dir}: cannot write: not a directory")
    names: dict[str, str] = {}
    with progress(f"decoding {len(kernels)} kernels") as shown:
        for n, k in enumerate(kernels, 1):
            try:
                listing.decode_kernel(k)
            except listing.ListingError as exc:
                fail(f"{k.display}:1: cannot decode the kernel: {exc}")
            name = file_name(k.name)
            if name in names:
                fail(f"{k.display}:1: two kernels would be written to {name}")
            names[name] = k.name
            if n % 50 == 0:
                shown.update(f"decoding {len(kernels)} kernels: {n} done")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        fail(f"{out_dir}: cannot write: {exc.strerror or exc}")
    with progress(f"writing {len(kernels)} kernels") as shown:
        for n, k in enumerate(kernels, 1):
            target = os.path.join(out_dir, file_name(k.name))
            try:
                with open(target, "w", encoding="utf-8") as fh:
                    fh.write(listing.render(k))
            except OSError as exc:
                fail(f"{target}: cannot write: {exc.strerror or exc}")
            if n % 50 == 0:
                shown.update(f"writing {len(kernels)} kernels: {n} done")
    click.echo(f"isalint: wrote {len(kernels)} kernel(s) to {out_dir}", err=True)
