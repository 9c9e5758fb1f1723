"""The lint engine: which rules run on which file, with what severities, and running them.

``selection`` (codes, prefixes and rule names resolved; the rules for a file; severity overrides),
``config`` (``[tool.isalint]``), ``suppressions`` (inline ``isalint: disable`` comments), ``engine``
(the rules run on one analysis), ``paths`` (the files a check takes), ``files`` (one file checked
within a memory bound: :func:`~isalint.lint.files.check_file`, :func:`~isalint.lint.files.check_text`;
it imports the model, so it is not imported here), ``cache`` (the result cache) and ``workers``
(worker processes). What is imported here stays light: ``isalint check`` answered from its result
cache imports it and nothing of the parser or the model.
"""
from .config import Config, ConfigError, find_config, load_config
from .engine import check_analysis
from .paths import ASM_SUFFIXES, expand_paths
from .selection import SEVERITIES, codes_for, resolve_codes

__all__ = ["ASM_SUFFIXES", "SEVERITIES", "Config", "ConfigError", "check_analysis", "codes_for", "expand_paths",
           "find_config", "load_config", "resolve_codes"]
