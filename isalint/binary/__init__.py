"""Code objects in: AMDGPU ELF files, clang offload bundles and HIP fat binaries read kernel by kernel,
their machine code decoded into the assembly text the parser reads (see :mod:`.codeobject`,
:mod:`.decoder`, :mod:`.listing`)."""
