"""isalint: static analyzer, linter and optimizer for AMD RDNA3 (gfx11) GEMM assembly."""
__version__ = "0.3.0"
